"""Checks a replay filter before submit: one Spark SQL boolean expression over the record's columns.

The filter runs inside the shared resident Spark driver, so it may use only what is listed here: operators and
functions that read their arguments and nothing else (no JVM reflection, files, URLs, schemas or session facts),
whose cost is at most linear in the record's size, and whose output is never larger than their inputs plus the
filter's own literals. Anything else is refused by name.

Spark is not given the text as typed but the SQL sqlglot writes back from the tree that was checked (comments
dropped), checked once more: a place where sqlglot and Spark read text differently (nested comments, escapes)
cannot hide a call from the check.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel
from sqlglot.dialects.spark import Spark
from sqlglot.tokens import TokenType

from console.errors import ConsoleError

# What the filter sees: key and value decoded as UTF-8 text (or, with a schema registry, the decoded record as
# JSON text: jobs/replay.py decodes before filtering, so a filter needs no decoding function), headers as
# array<struct<key,value>>.
FILTER_COLUMNS = frozenset({"key", "value", "headers", "timestamp", "topic", "partition", "offset", "timestampType"})
MAX_FILTER_CHARS = 2000
MAX_DEPTH = 60  # Spark's and sqlglot's parsers both recurse per level
MAX_PAD_LENGTH = 1000

MSG_BAD_FILTER = "The filter is not a valid Spark SQL expression: {error}"
MSG_UNKNOWN_COLUMN = "The filter uses {names}; it can use only {allowed}."
MSG_NOT_AN_EXPRESSION = "The filter must be one boolean expression, not a statement or a query."
MSG_NOT_ALLOWED = ("The filter may not use {names}: a filter may use only the operators and functions listed "
                   "in the README (Replays), which read the record's columns and nothing else.")
MSG_TOO_LONG = f"The filter is longer than {MAX_FILTER_CHARS} characters."
MSG_TOO_DEEP = f"The filter nests more than {MAX_DEPTH} levels deep."
MSG_SUBSTITUTION = ("The filter may not contain '${': Spark would replace it with a setting or an environment "
                    "variable before reading the filter.")
MSG_LIKE_PATTERN = ("A LIKE pattern must be a string literal with at most one '%' before its end (such as 'a%', "
                    "'%a%' or 'a%b'): Spark matches other patterns with a backtracking regular expression.")
MSG_LITERAL_NEEDLE = "{name}() needs a string literal to look for, so its cost stays linear in the record."
MSG_PAD_LENGTH = f"lpad() and rpad() need a literal length of at most {MAX_PAD_LENGTH}."
MSG_CAST_TYPE = "A filter may cast to {allowed} only, not {type}."

def _classes(names: str) -> frozenset[type[exp.Expression]]:
    # A class this sqlglot lacks is left out: its functions are then refused, never let through.
    return frozenset(getattr(exp, name) for name in names.split() if hasattr(exp, name))


# Structure and operators. Regular expressions (RLIKE, REGEXP, regexp_*, split, str_to_map) are left out: Java's
# engine backtracks, so one pattern can hold a task for hours. LIKE is kept with the literal shapes Spark either
# rewrites to startsWith/endsWith/contains or matches with a regex of one `.*` (MSG_LIKE_PATTERN).
_OPERATORS = frozenset({
    exp.Column, exp.Literal, exp.Boolean, exp.Null, exp.HexString, exp.Paren, exp.Interval, exp.Bracket, exp.Dot,
    exp.Lambda, exp.DataType, exp.DataTypeParam, exp.Var,
    exp.And, exp.Or, exp.Not, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ,
    exp.Is, exp.In, exp.Between, exp.Like, exp.ILike, exp.Case, exp.If, exp.Cast, exp.TryCast,
    exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv, exp.Neg, exp.BitwiseAnd, exp.BitwiseOr,
    exp.BitwiseXor, exp.BitwiseNot, exp.DPipe,
    exp.JSONPath, exp.JSONPathKey, exp.JSONPathRoot, exp.JSONPathSubscript, exp.JSONPathWildcard,
})
# Functions sqlglot knows by class (several Spark names may share one: nvl/ifnull/coalesce, instr/locate/position,
# lpad/rpad, size/array_size, element_at/try_element_at are Bracket). Left out on purpose, besides everything that
# reaches the JVM, files or the session: repeat, space, sequence, array_repeat and replace (output a multiple of
# the input), format_string/printf/format_number (a width makes output of any size), aggregate/reduce and transform
# (a lambda can grow its result per element), levenshtein (quadratic), from_json/from_avro/from_protobuf/to_avro/
# schema_of_* (schemas and options, some of which read files or URLs), casts to DECIMAL (Java's BigDecimal parses a
# long digit string in quadratic time).
_FUNCTIONS = _classes("""
    Coalesce Nullif Nvl2 EqualNull IsNan Nanvl Greatest Least Typeof Lower Upper Length BitLength Trim
    Substring Left Right StartsWith EndsWith Contains StrPosition Concat ConcatWs Reverse Initcap Translate
    Ascii Chr Soundex Pad MD5 SHA SHA2 Hex Unhex ToBase64 FromBase64 Decode JSONExtractScalar JSONKeys
    CurrentTimestamp CurrentDate Year Month Day DayOfMonth DayOfWeek DayOfYear WeekOfYear Quarter Hour Minute
    Second TsOrDsToDate TimeStrToTime TimeToStr StrToUnix UnixToStr UnixMillis UnixSeconds UnixMicros TsOrDsAdd
    DateDiff AddMonths MonthsBetween LastDay TimestampTrunc StrToTime StrToDate Abs Ceil Floor Round Sqrt Cbrt
    Exp Ln Log Pow Sign Negative SafeDivide Exists ArrayFilter ArrayContains ArrayPosition ArraySize
""")
# The Spark names a filter may call, as typed (sqlglot also reads other dialects' names into the classes above;
# those are refused, so this list is the whole contract). CAST, TRY_CAST and the cast functions (int(x), string(x)
# ...) are casts; IF, EXISTS and FILTER are listed as the calls they look like.
SPARK_FUNCTIONS = frozenset({
    # conditions and nulls
    "if", "coalesce", "nvl", "ifnull", "nullif", "nvl2", "equal_null", "isnull", "isnotnull", "isnan", "nanvl",
    "nullifzero", "zeroifnull", "greatest", "least", "typeof",
    # casts
    "cast", "try_cast", "boolean", "int", "double", "float", "string", "date",
    # text and bytes
    "lower", "lcase", "upper", "ucase", "length", "len", "char_length", "character_length", "octet_length",
    "bit_length", "trim", "ltrim", "rtrim", "btrim", "substring", "substr", "left", "right", "startswith",
    "endswith", "contains", "instr", "locate", "position", "concat", "concat_ws", "reverse", "initcap", "translate",
    "ascii", "chr", "char", "soundex", "lpad", "rpad", "like", "ilike", "decode", "hex", "unhex", "base64",
    "unbase64", "md5", "sha", "sha1", "sha2", "crc32", "hash", "xxhash64",
    # JSON text
    "get_json_object", "json_array_length", "json_object_keys",
    # dates and times
    "current_timestamp", "current_date", "curdate", "now", "year", "month", "day", "dayofmonth", "dayofweek",
    "dayofyear", "weekofyear", "quarter", "hour", "minute", "second", "to_date", "to_timestamp", "try_to_timestamp",
    "date_format", "unix_timestamp", "to_unix_timestamp", "from_unixtime", "unix_millis", "unix_seconds",
    "unix_micros", "timestamp_millis", "timestamp_seconds", "timestamp_micros", "date_add", "date_sub", "datediff",
    "add_months", "months_between", "last_day", "date_trunc", "make_date",
    # numbers
    "abs", "ceil", "ceiling", "floor", "round", "bround", "sqrt", "cbrt", "exp", "ln", "log", "log10", "log2", "pow",
    "power", "sign", "signum", "mod", "pmod", "positive", "negative", "try_divide",
    # headers (arrays)
    "exists", "forall", "filter", "array_contains", "array_position", "size", "array_size", "cardinality",
    "element_at", "try_element_at", "get",
})
# Words followed by a parenthesis that are syntax, not calls.
_SYNTAX_WORDS = frozenset({"and", "or", "not", "in", "is", "between", "when", "then", "else", "case", "as", "div",
                           "from", "for", "null"})
# Spark functions sqlglot parses as anonymous calls, allowed by name.
ALLOWED_NAMES = frozenset({
    "isnull", "isnotnull", "nullifzero", "zeroifnull", "octet_length", "btrim", "crc32", "hash", "xxhash64",
    "json_array_length", "pmod", "bround", "positive", "now", "make_date", "timestamp_millis", "timestamp_seconds",
    "timestamp_micros", "unix_micros", "try_to_timestamp", "forall", "cardinality", "get",
})
_CAST_TYPES = {
    exp.DataType.Type.TEXT: "STRING", exp.DataType.Type.VARCHAR: "VARCHAR", exp.DataType.Type.CHAR: "CHAR",
    exp.DataType.Type.BINARY: "BINARY", exp.DataType.Type.BOOLEAN: "BOOLEAN", exp.DataType.Type.TINYINT: "TINYINT",
    exp.DataType.Type.SMALLINT: "SMALLINT", exp.DataType.Type.INT: "INT", exp.DataType.Type.BIGINT: "BIGINT",
    exp.DataType.Type.FLOAT: "FLOAT", exp.DataType.Type.DOUBLE: "DOUBLE", exp.DataType.Type.DATE: "DATE",
    exp.DataType.Type.TIMESTAMP: "TIMESTAMP", exp.DataType.Type.TIMESTAMPNTZ: "TIMESTAMP_NTZ",
}
_UNITS = frozenset({"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND",
                    "MICROSECOND"})
# Names sqlglot gives operators that a user typed as a keyword, for the refusal message.
_KEYWORDS = {exp.RegexpLike: "rlike", exp.RegexpILike: "rlike", exp.SimilarTo: "similar to", exp.Escape: "escape",
             exp.Any: "any", exp.All: "all", exp.Parameter: "${}", exp.Placeholder: "?", exp.Window: "over",
             exp.Star: "*"}
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERAL_TOKENS = frozenset(getattr(TokenType, name) for name in (
    "STRING", "NATIONAL_STRING", "RAW_STRING", "HEX_STRING", "BIT_STRING", "BYTE_STRING", "HEREDOC_STRING",
    "UNICODE_STRING", "NUMBER") if hasattr(TokenType, name))


def filter_check(expression: str) -> str:
    """Returns the expression stripped (as typed: what the job shows), or raises ConsoleError naming the problem."""
    expression = expression.strip()
    if expression:
        filter_spark_sql(expression)
    return expression


def filter_spark_sql(expression: str) -> str:
    """The Spark SQL to run for a filter: regenerated from the checked tree and checked again. Raises ConsoleError.
    The run calls it again (sparkjobs/services.py), so a job stored under an older, looser check is refused too."""
    expression = expression.strip()
    if not expression:
        return ""
    sql = _spark_sql(_checked(expression))
    if _spark_sql(_checked(sql)) != sql:
        raise ConsoleError(MSG_BAD_FILTER.format(error="it does not read back the same"))
    return sql


def _spark_sql(tree: exp.Expression) -> str:
    # Anything sqlglot cannot write as Spark exactly is refused, not written approximately.
    try:
        return tree.sql(dialect="spark", comments=False, unsupported_level=ErrorLevel.RAISE)
    except sqlglot.errors.UnsupportedError as exc:
        raise ConsoleError(MSG_BAD_FILTER.format(error=str(exc).splitlines()[0])) from exc


def _checked(text: str) -> exp.Expression:
    if len(text) > MAX_FILTER_CHARS:
        raise ConsoleError(MSG_TOO_LONG)
    # Spark substitutes ${...} (settings, environment variables) in the text before parsing it, even inside quotes.
    if "${" in text:
        raise ConsoleError(MSG_SUBSTITUTION)
    try:
        tree = sqlglot.parse_one(text, read="spark")
    except sqlglot.errors.ParseError as exc:
        raise ConsoleError(MSG_BAD_FILTER.format(error=str(exc).splitlines()[0])) from exc
    except RecursionError as exc:
        raise ConsoleError(MSG_TOO_DEEP) from exc
    except Exception as exc:  # noqa: BLE001 - sqlglot's parser fails on some odd input with other errors
        raise ConsoleError(MSG_BAD_FILTER.format(error=type(exc).__name__)) from exc
    if tree is None or isinstance(tree, exp.Query | exp.Command) or tree.find(exp.Subquery, exp.Select):
        raise ConsoleError(MSG_NOT_AN_EXPRESSION)
    check = _Check()
    check.refused.update(f"{name}()" for name in _called_names(text) - SPARK_FUNCTIONS)
    check.visit(tree, frozenset(), 0)
    if check.refused:
        raise ConsoleError(MSG_NOT_ALLOWED.format(names=", ".join(sorted(check.refused))))
    if check.unknown:
        raise ConsoleError(MSG_UNKNOWN_COLUMN.format(names=", ".join(sorted(check.unknown)),
                                                     allowed=", ".join(sorted(FILTER_COLUMNS))))
    if check.problems:
        raise ConsoleError(check.problems[0])
    return tree


_COLUMNS = frozenset(name.lower() for name in FILTER_COLUMNS)


class _Check:
    """One walk over the tree; `scope` holds the lambda variables in reach."""

    def __init__(self) -> None:
        self.refused: set[str] = set()
        self.unknown: set[str] = set()
        self.problems: list[str] = []

    def visit(self, node: exp.Expression, scope: frozenset[str], depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ConsoleError(MSG_TOO_DEEP)
        kind = type(node)
        if isinstance(node, exp.Identifier):  # reached only outside the places below that name things
            self.unknown.add(node.name)
            return
        if isinstance(node, exp.Anonymous):
            if node.name.lower() not in ALLOWED_NAMES:
                self.refused.add(f"{node.name.lower()}()")
        elif kind not in _OPERATORS and kind not in _FUNCTIONS:
            self.refused.add(_display_name(node))
            return
        if isinstance(node, exp.Column):
            self._column(node, scope)
            return
        if isinstance(node, exp.Dot):
            self._dot(node, scope, depth)
            return
        if isinstance(node, exp.Lambda):
            names = frozenset(p.name.lower() for p in node.expressions)
            self.visit(node.this, scope | names, depth + 1)
            return
        if isinstance(node, exp.DataType):
            self._cast_type(node)
            return
        if isinstance(node, exp.Var) and node.name.upper().removesuffix("S") not in _UNITS:
            self.refused.add(node.name)
            return
        self._arguments(node)
        for child in node.iter_expressions():
            self.visit(child, scope, depth + 1)

    def _column(self, node: exp.Column, scope: frozenset[str]) -> None:
        parts = [part.name for part in node.parts]
        known = _COLUMNS | scope
        # `headers.key` is a field of every header; `h.key` a field of a lambda's variable.
        if isinstance(node.this, exp.Star) or len(parts) > 2 or parts[0].lower() not in known:
            self.unknown.add(".".join(parts))

    def _dot(self, node: exp.Dot, scope: frozenset[str], depth: int) -> None:
        field = node.expression
        if not isinstance(field, exp.Identifier):  # db.function(...): a catalog's function, not a field
            self.refused.add(_display_name(field) if isinstance(field, exp.Func) else field.sql(dialect="spark"))
            return
        if isinstance(node.this, exp.Identifier):
            if node.this.name.lower() not in _COLUMNS | scope:
                self.unknown.add(node.this.name)
        else:
            self.visit(node.this, scope, depth + 1)

    def _cast_type(self, node: exp.DataType) -> None:
        if node.this not in _CAST_TYPES or node.find(exp.ColumnDef):
            self.problems.append(MSG_CAST_TYPE.format(allowed=", ".join(sorted(set(_CAST_TYPES.values()))),
                                                      type=node.sql(dialect="spark")))

    def _arguments(self, node: exp.Expression) -> None:
        """Arguments that must be literals for the function's cost or output to stay bounded."""
        if isinstance(node, exp.Like | exp.ILike):
            if node.args.get("escape") or not _like_is_linear(node.expression):
                self.problems.append(MSG_LIKE_PATTERN)
        elif isinstance(node, exp.Contains):
            if not _is_string(node.expression):
                self.problems.append(MSG_LITERAL_NEEDLE.format(name="contains"))
        elif isinstance(node, exp.StrPosition):
            if not _is_string(node.args.get("substr")):
                self.problems.append(MSG_LITERAL_NEEDLE.format(name="instr"))
        elif isinstance(node, exp.Pad):
            length = node.expression
            if not (isinstance(length, exp.Literal) and not length.is_string and length.this.isdigit()
                    and int(length.this) <= MAX_PAD_LENGTH):
                self.problems.append(MSG_PAD_LENGTH)


def _called_names(text: str) -> set[str]:
    """The names written in front of a parenthesis, lower-cased: what the user calls, whatever sqlglot makes of it
    (a type's parameters, `AS DECIMAL(10, 2)`, are not calls)."""
    tokens = Spark().tokenize(text)
    names = set()
    for before, token, after in zip([None, *tokens], tokens, [*tokens[1:], None]):
        if after is None or after.token_type != TokenType.L_PAREN:
            continue
        if before is not None and before.token_type == TokenType.ALIAS:
            continue
        if token.token_type == TokenType.IDENTIFIER or (token.token_type not in _LITERAL_TOKENS
                                                        and _WORD.fullmatch(token.text)):
            name = token.text.lower()
            if name not in _SYNTAX_WORDS:
                names.add(name)
    return names


def _is_string(node: exp.Expression | None) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _like_is_linear(pattern: exp.Expression | None) -> bool:
    """Spark turns a LIKE pattern into an anchored Java regex, `%` into `.*`. A `.*` followed by more pattern
    backtracks; one of them costs a pass per position, two or more multiply. So: at most one unescaped `%` that
    is not the pattern's last character (Spark's escape character is the backslash)."""
    if not _is_string(pattern):
        return False
    text, inner, i = pattern.this, 0, 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "%" and i < len(text) - 1:
            inner += 1
        i += 1
    return inner <= 1


def _display_name(node: exp.Expression) -> str:
    """The refused thing as the user wrote it, near enough: a function's Spark name, or the operator's keyword."""
    if isinstance(node, exp.Anonymous):
        return f"{node.name.lower()}()"
    for kind, keyword in _KEYWORDS.items():
        if isinstance(node, kind):
            return keyword
    if isinstance(node, exp.Func):
        try:
            found = _CALL.match(node.sql(dialect="spark", comments=False))
        except Exception:  # noqa: BLE001 - a node sqlglot cannot write as Spark still gets a name
            found = None
        return f"{(found.group(1) if found else node.sql_name()).lower()}()"
    return node.key
