"""A group's total lag at its newest sample, read by the database from the stored `totals` (a JSON list).

The groups list's rebuild and the alert rules read it for every group after every sweep. Fetched whole, each of
50,000 windows' totals was parsed by Django's JSONField to keep its last number: most of the alert evaluation's
time and a good part of the rebuild's, in the Celery worker beside the sweep. SQLite and PostgreSQL, the console's
two engines, each take an array's last element in SQL.
"""

from __future__ import annotations

from django.db import NotSupportedError
from django.db.models import BigIntegerField, Func


class LastTotal(Func):
    """The last element of a JSON array column as a number; NULL for an empty array or a JSON null there."""

    arity = 1
    output_field = BigIntegerField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return self.as_sql(compiler, connection, template="json_extract(%(expressions)s, '$[#-1]')",
                           **extra_context)

    def as_postgresql(self, compiler, connection, **extra_context):
        # ->> gives the element as text (NULL for a JSON null), which casts to a number.
        return self.as_sql(compiler, connection, template="((%(expressions)s ->> -1)::bigint)", **extra_context)

    def as_sql(self, compiler, connection, template=None, **extra_context):
        if template is None:
            raise NotSupportedError(f"LastTotal is not written for {connection.vendor}")
        return super().as_sql(compiler, connection, template=template, **extra_context)
