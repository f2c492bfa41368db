"""A group's total lag at its newest samples, read by the database from the stored `totals` (a JSON list).

The groups list's rebuild, the alert rules and the next sweep's order read it for every group after every sweep.
Fetched whole, each of 50,000 windows' totals was parsed by Django's JSONField to keep its last one or two numbers:
most of the alert evaluation's time and a good part of the rebuild's, in the Celery worker beside the sweep. SQLite
and PostgreSQL, the console's two engines, each take an array's element counted from its end in SQL.
"""

from __future__ import annotations

from django.db import NotSupportedError
from django.db.models import BigIntegerField, Func


class LastTotal(Func):
    """The `back`-th element from a JSON array column's end (1: the last) as a number; NULL when the array is
    shorter, or holds a JSON null there."""

    arity = 1
    output_field = BigIntegerField()

    def __init__(self, expression, back: int = 1, **extra):
        if not isinstance(back, int) or back < 1:
            raise ValueError(f"back counts from 1, got {back!r}")
        self.back = back  # an int, checked above: written into the SQL, never a user's text
        super().__init__(expression, **extra)

    def as_sqlite(self, compiler, connection, **extra_context):
        return self.as_sql(compiler, connection, template=f"json_extract(%(expressions)s, '$[#-{self.back}]')",
                           **extra_context)

    def as_postgresql(self, compiler, connection, **extra_context):
        # ->> gives the element as text (NULL for a JSON null), which casts to a number.
        return self.as_sql(compiler, connection, template=f"((%(expressions)s ->> -{self.back})::bigint)",
                           **extra_context)

    def as_sql(self, compiler, connection, template=None, **extra_context):
        if template is None:
            raise NotSupportedError(f"LastTotal is not written for {connection.vendor}")
        return super().as_sql(compiler, connection, template=template, **extra_context)
