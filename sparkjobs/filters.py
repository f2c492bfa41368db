"""Checks a replay filter before submit: one Spark SQL boolean expression over the record's columns."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from console.errors import ConsoleError

# What the filter sees: key and value decoded as UTF-8 text, headers as array<struct<key,value>>.
FILTER_COLUMNS = frozenset({"key", "value", "headers", "timestamp", "topic", "partition", "offset", "timestampType"})
MSG_BAD_FILTER = "The filter is not a valid Spark SQL expression: {error}"
MSG_UNKNOWN_COLUMN = "The filter uses {names}; it can use only {allowed}."
MSG_NOT_AN_EXPRESSION = "The filter must be one boolean expression, not a statement or a query."
MSG_FORBIDDEN_FUNCTION = ("The filter may not call {names}: a filter reads the record's columns only, never the JVM, "
                          "files or the session.")
# Functions that reach the JVM (reflection), the file system (file names, readers, XPath with its external
# entities) or facts about the session; nothing a filter over one record needs.
FORBIDDEN_FUNCTIONS = frozenset({
    "reflect", "try_reflect", "java_method", "input_file_name", "input_file_block_start", "input_file_block_length",
    "read_files", "xpath", "xpath_boolean", "xpath_double", "xpath_float", "xpath_int", "xpath_long",
    "xpath_number", "xpath_short", "xpath_string", "current_user", "session_user", "user", "current_catalog",
    "current_database", "current_schema", "version",
})


def filter_check(expression: str) -> str:
    """Returns the expression stripped, or raises ConsoleError naming the problem. Spark has the last word."""
    expression = expression.strip()
    if not expression:
        return ""
    try:
        tree = sqlglot.parse_one(expression, read="spark")
    except sqlglot.errors.ParseError as exc:
        raise ConsoleError(MSG_BAD_FILTER.format(error=str(exc).splitlines()[0])) from exc
    if isinstance(tree, exp.Query | exp.Command) or tree.find(exp.Subquery, exp.Select):
        raise ConsoleError(MSG_NOT_AN_EXPRESSION)
    called = {(f.name if isinstance(f, exp.Anonymous) else f.sql_name()).lower() for f in tree.find_all(exp.Func)}
    forbidden = sorted(called & FORBIDDEN_FUNCTIONS)
    if forbidden:
        raise ConsoleError(MSG_FORBIDDEN_FUNCTION.format(names=", ".join(f"{name}()" for name in forbidden)))
    names = {c.name for c in tree.find_all(exp.Column) if not c.table}
    unknown = sorted(n for n in names if n not in FILTER_COLUMNS and n.lower() not in {"true", "false", "null"})
    if unknown:
        raise ConsoleError(MSG_UNKNOWN_COLUMN.format(names=", ".join(unknown), allowed=", ".join(sorted(FILTER_COLUMNS))))
    return expression
