"""Many rows in one statement run with executemany, for the writers whose volume the ORM's bulk_create cannot carry.

bulk_create compiles SQL per object and per field (most of a 50,000-group lag sweep's storing time went there);
here the statement is built once from the model's own table and column names, and values are adapted once per
column kind: datetimes by the backend's own adapter, JSON by the field itself (SQLite wants text, PostgreSQL an
adapted jsonb). INSERT ... ON CONFLICT works the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from django.db import connection, models


def insert_rows(model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence], *,
                conflict: Sequence[str], update: Sequence[str] = (), unless_newer: str = "") -> None:
    """Inserts `rows` (values in the order of `fields`); a row that hits the unique `conflict` columns updates
    `update` from the new row, or is skipped when `update` is empty. With `unless_newer` (a field), a stored row
    whose value there is later than the new row's is kept as it is. Callers wrap it in their transaction."""
    quote, meta = connection.ops.quote_name, model._meta
    columns = [meta.get_field(name) for name in fields]
    names = [quote(field.column) for field in columns]
    sql = (f"INSERT INTO {quote(meta.db_table)} ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))}) "
           f"ON CONFLICT ({', '.join(quote(meta.get_field(name).column) for name in conflict)}) ")
    if update:
        updated = [quote(meta.get_field(name).column) for name in update]
        sql += "DO UPDATE SET " + ", ".join(f"{column} = EXCLUDED.{column}" for column in updated)
        if unless_newer:
            stored = f"{quote(meta.db_table)}.{quote(meta.get_field(unless_newer).column)}"
            sql += f" WHERE {stored} IS NULL OR {stored} <= EXCLUDED.{quote(meta.get_field(unless_newer).column)}"
    else:
        sql += "DO NOTHING"
    rows = list(rows)
    if not rows:
        return
    copying = connection.vendor == "postgresql" and len(rows) >= COPY_FROM_ROWS and connection.in_atomic_block
    # A column at a time: adapting row by row (a generator per row) was most of this function's time in a sweep.
    values = list(zip(*rows, strict=True))
    if len(values) != len(columns):
        raise ValueError(f"rows of {len(values)} values for {len(columns)} fields")
    adapters = [_adapter(field, copying) for field in columns]
    prepared = list(zip(*[column if adapt is None else [adapt(v) for v in column]
                          for adapt, column in zip(adapters, values)]))
    if copying:
        _insert_by_copy(meta.db_table, names, sql, prepared)
        return
    with connection.cursor() as cursor:
        cursor.executemany(sql, prepared)


# From this many rows on, PostgreSQL gets them by COPY into a temporary table and one INSERT ... SELECT from it: a
# lag sweep's batch of 1,000 groups spent most of its storing time binding executemany's parameters in Python.
COPY_FROM_ROWS = 200


def _insert_by_copy(table: str, names: list[str], insert_sql: str, rows: list[tuple]) -> None:
    quote = connection.ops.quote_name
    staging = quote(f"staging_{table}")
    columns = ", ".join(names)
    select = insert_sql.replace(f"VALUES ({', '.join(['%s'] * len(names))})", f"SELECT {columns} FROM {staging}", 1)
    with connection.cursor() as cursor:
        # The inserted columns' types and nothing else (no defaults, keys or constraints); dropped when the caller's
        # transaction ends, and emptied first if this transaction stages the same table twice.
        cursor.execute(f"CREATE TEMPORARY TABLE IF NOT EXISTS {staging} ON COMMIT DROP AS "
                       f"SELECT {columns} FROM {quote(table)} WITH NO DATA")
        cursor.execute(f"TRUNCATE {staging}")
        with cursor.cursor.copy(f"COPY {staging} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute(select)


def _adapter(field: models.Field, copying: bool):
    if isinstance(field, models.DateTimeField):
        adapt = connection.ops.adapt_datetimefield_value
        cache: dict = {}

        def datetime_value(value):  # a batch carries one or two distinct times: adapt each once
            if value not in cache:
                cache[value] = adapt(value)
            return cache[value]

        return datetime_value
    if isinstance(field, models.JSONField):
        if copying:  # COPY's text form takes the JSON text as it is, without the driver's per-value wrapping
            encoder = field.encoder
            return lambda value: None if value is None else json.dumps(value, cls=encoder, separators=(",", ":"))
        return lambda value: field.get_db_prep_save(value, connection)
    return None
