"""Replay filters: an allowlist of Spark SQL, checked at submit; Spark runs the SQL regenerated from the checked tree."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot.dialects.spark import Spark

from console.errors import ConsoleError
from sparkjobs import filters
from sparkjobs.filters import (
    MAX_PAD_LENGTH, MSG_BAD_FILTER, MSG_LIKE_PATTERN, MSG_NOT_ALLOWED, MSG_PAD_LENGTH, MSG_SUBSTITUTION, MSG_TOO_LONG,
    SPARK_FUNCTIONS, filter_check, filter_spark_sql,
)

# One call of every function on the list, each a boolean over the replay's columns, each true for the first row
# of `records` below (the Spark test checks that too, so each example is known to run).
EXAMPLES = {
    "if": "IF(partition = 0, true, false)",
    "coalesce": "coalesce(key, 'x') = 'k0'",
    "nvl": "nvl(key, 'x') = 'k0'",
    "ifnull": "ifnull(key, 'x') = 'k0'",
    "nullif": "nullif(key, 'z') = 'k0'",
    "nvl2": "nvl2(key, 1, 2) = 1",
    "equal_null": "equal_null(key, 'k0')",
    "isnull": "NOT isnull(key)",
    "isnotnull": "isnotnull(value)",
    "isnan": "NOT isnan(CAST(offset AS DOUBLE))",
    "nanvl": "nanvl(CAST(offset AS DOUBLE), 1.0) = 0.0",
    "nullifzero": "nullifzero(partition) IS NULL",
    "zeroifnull": "zeroifnull(partition) = 0",
    "greatest": "greatest(partition, 0) = 0",
    "least": "least(partition, 3) = 0",
    "typeof": "typeof(value) = 'string'",
    "cast": "CAST(offset AS INT) % 2 = 0",
    "try_cast": "try_cast(value AS INT) IS NULL",
    "boolean": "boolean(1)",
    "int": "int(partition) = 0",
    "double": "double(partition) = 0.0",
    "float": "float(partition) < 1",
    "string": "string(partition) = '0'",
    "date": "date(timestamp) = DATE'2026-03-01'",
    "lower": "lower(value) LIKE '%even%'",
    "lcase": "lcase(key) = 'k0'",
    "upper": "upper(key) = 'K0'",
    "ucase": "ucase(key) = 'K0'",
    "length": "length(key) = 2",
    "len": "len(key) = 2",
    "char_length": "char_length(key) = 2",
    "character_length": "character_length(key) = 2",
    "octet_length": "octet_length(key) = 2",
    "bit_length": "bit_length(key) = 16",
    "trim": "trim(key) = 'k0'",
    "ltrim": "ltrim(key) = 'k0'",
    "rtrim": "rtrim(key) = 'k0'",
    "btrim": "btrim(key) = 'k0'",
    "substring": "substring(value, 1, 2) = '{\"'",
    "substr": "substr(key, 2) = '0'",
    "left": "left(key, 1) = 'k'",
    "right": "right(key, 1) = '0'",
    "startswith": "startswith(key, 'k')",
    "endswith": "endswith(value, '}')",
    "contains": "contains(value, 'even')",
    "instr": "instr(value, 'even') > 0",
    "locate": "locate('even', value) > 0",
    "position": "position('even' IN value) > 0",
    "concat": "concat(key, '-', topic) = 'k0-t'",
    "concat_ws": "concat_ws('/', key, topic) = 'k0/t'",
    "reverse": "reverse(key) = '0k'",
    "initcap": "initcap(key) = 'K0'",
    "translate": "translate(key, 'k', 'q') = 'q0'",
    "ascii": "ascii(key) = 107",
    "chr": "chr(107) = left(key, 1)",
    "char": "char(107) = left(key, 1)",
    "soundex": "soundex('kafka') = 'K120'",
    "lpad": "lpad(key, 4, '0') = '00k0'",
    "rpad": "rpad(key, 4, '.') = 'k0..'",
    "like": "like(key, 'k%')",
    "ilike": "ilike(key, 'K%')",
    "decode": "decode(element_at(headers, 1).value, 'UTF-8') = 't0'",
    "hex": "hex(key) = '6B30'",
    "unhex": "unhex('6B30') = CAST(key AS BINARY)",
    "base64": "base64(CAST(key AS BINARY)) = 'azA='",
    "unbase64": "unbase64('azA=') = CAST(key AS BINARY)",
    "md5": "length(md5(key)) = 32",
    "sha": "length(sha(CAST(key AS BINARY))) = 40",
    "sha1": "length(sha1(CAST(key AS BINARY))) = 40",
    "sha2": "length(sha2(CAST(key AS BINARY), 256)) = 64",
    "crc32": "crc32(CAST(key AS BINARY)) > 0",
    "hash": "hash(key) IS NOT NULL",
    "xxhash64": "xxhash64(key) IS NOT NULL",
    "get_json_object": "get_json_object(value, '$.kind') = 'even' AND partition = 0",
    "json_array_length": "json_array_length(get_json_object(value, '$.tags')) = 2",
    "json_object_keys": "size(json_object_keys(value)) = 3",
    "current_timestamp": "timestamp < current_timestamp() - INTERVAL 1 HOUR",
    "current_date": "CAST(timestamp AS DATE) < current_date()",
    "curdate": "CAST(timestamp AS DATE) < curdate()",
    "now": "timestamp < now()",
    "year": "year(timestamp) = 2026",
    "month": "month(timestamp) = 3",
    "day": "day(timestamp) = 1",
    "dayofmonth": "dayofmonth(timestamp) = 1",
    "dayofweek": "dayofweek(timestamp) = 1",
    "dayofyear": "dayofyear(timestamp) = 60",
    "weekofyear": "weekofyear(timestamp) = 9",
    "quarter": "quarter(timestamp) = 1",
    "hour": "hour(timestamp) BETWEEN 0 AND 23",
    "minute": "minute(timestamp) = 30",
    "second": "second(timestamp) = 15",
    "to_date": "to_date('2026-03-01') = CAST(timestamp AS DATE)",
    "to_timestamp": "to_timestamp('2026-03-01 10:30:15', 'yyyy-MM-dd HH:mm:ss') = timestamp",
    "try_to_timestamp": "try_to_timestamp('not a time') IS NULL",
    "date_format": "date_format(timestamp, 'yyyy-MM-dd') = '2026-03-01'",
    "unix_timestamp": "unix_timestamp(timestamp) > 0",
    "to_unix_timestamp": "to_unix_timestamp(timestamp) > 0",
    "from_unixtime": "from_unixtime(0, 'yyyy') = '1970'",
    "unix_millis": "unix_millis(timestamp) > 0",
    "unix_seconds": "unix_seconds(timestamp) > 0",
    "unix_micros": "unix_micros(timestamp) > 0",
    "timestamp_millis": "timestamp_millis(0) < timestamp",
    "timestamp_seconds": "timestamp_seconds(0) < timestamp",
    "timestamp_micros": "timestamp_micros(0) < timestamp",
    "date_add": "date_add(CAST(timestamp AS DATE), 1) = DATE'2026-03-02'",
    "date_sub": "date_sub(CAST(timestamp AS DATE), 1) = DATE'2026-02-28'",
    "datediff": "datediff(DATE'2026-03-03', CAST(timestamp AS DATE)) = 2",
    "add_months": "add_months(CAST(timestamp AS DATE), 1) = DATE'2026-04-01'",
    "months_between": "months_between(timestamp, timestamp) = 0",
    "last_day": "last_day(CAST(timestamp AS DATE)) = DATE'2026-03-31'",
    "date_trunc": "date_trunc('HOUR', timestamp) < timestamp",
    "make_date": "make_date(2026, 3, 1) = CAST(timestamp AS DATE)",
    "abs": "abs(partition - 1) = 1",
    "ceil": "ceil(offset / 2) = 0",
    "ceiling": "ceiling(offset / 2) = 0",
    "floor": "floor(offset / 2) = 0",
    "round": "round(offset / 2) = 0",
    "bround": "bround(offset / 2) = 0",
    "sqrt": "sqrt(offset) = 0",
    "cbrt": "cbrt(offset) = 0",
    "exp": "exp(offset) = 1",
    "ln": "ln(offset + 1) = 0",
    "log": "log(10, 100) = 2",
    "log10": "log10(100) = 2",
    "log2": "log2(8) = 3",
    "pow": "pow(2, partition) = 1",
    "power": "power(2, partition) = 1",
    "sign": "sign(partition) = 0",
    "signum": "signum(partition) = 0",
    "mod": "mod(offset, 2) = 0",
    "pmod": "pmod(offset, 2) = 0",
    "positive": "positive(partition) = 0",
    "negative": "negative(partition) = 0",
    "try_divide": "try_divide(offset, 0) IS NULL",
    "exists": "exists(headers, h -> h.key = 'trace')",
    "forall": "forall(headers, h -> h.key = 'trace')",
    "filter": "size(filter(headers, h -> h.key = 'trace')) = 1",
    "array_contains": "array_contains(headers.key, 'trace')",
    "array_position": "array_position(headers.key, 'trace') = 1",
    "size": "size(headers) = 1",
    "array_size": "array_size(headers) = 1",
    "cardinality": "cardinality(headers) = 1",
    "element_at": "element_at(headers, 1).key = 'trace'",
    "try_element_at": "try_element_at(headers, 5) IS NULL",
    "get": "get(headers, 0).key = 'trace'",
}

# Filters the other replay tests and the README use, unchanged.
IN_USE = [
    "value LIKE '%x%'", "partition = 0 AND key IS NOT NULL", "exists(headers, h -> h.key = 'trace')",
    "get_json_object(value, '$.kind') = 'even' AND partition = 1", "get_json_object(value, '$.country') = 'NO'",
    "get_json_object(value, '$.n') < 10", "headers[0].key = 'trace' AND headers.key[0] = 'trace'",
    "timestamp >= '2026-01-01' AND timestampType = 0 AND topic = 't'", "partition IN (0, 1) AND offset BETWEEN 1 AND 5",
    "CASE WHEN partition = 0 THEN key = 'a' ELSE value <> 'b' END", "key <=> value OR NOT (value LIKE 'a%b')",
    "value = 'it\\'s' OR value = \"quoted\"", "`value` LIKE '%\\%%'",
]


@pytest.mark.parametrize("expression", IN_USE + [""])
def test_filters_in_use_stay_valid(expression):
    assert filter_check(expression) == expression.strip()


def test_every_function_on_the_list_has_a_checked_example():
    assert set(EXAMPLES) == set(SPARK_FUNCTIONS)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_listed_function_passes(name):
    expression = EXAMPLES[name]
    assert filter_check(expression) == expression
    assert filter_spark_sql(expression)


@pytest.mark.parametrize(("expression", "names"), [
    # Reads a schema from a URL or file through its options: not on the old list of forbidden names.
    ("from_avro(value, '\"string\"', map('avroSchemaUrl', 'file:///etc/passwd')) IS NULL", ["from_avro"]),
    # Reads a descriptor file; also not on the old list.
    ("from_protobuf(value, 'M', '/etc/passwd') IS NULL", ["from_protobuf"]),
    ("to_avro(value) IS NULL", ["to_avro"]),
    ("schema_of_avro('\"string\"') = 'x'", ["schema_of_avro"]),
    ("parse_url(value, 'HOST', 'x') = 'a' OR url_decode(value) = 'b'", ["parse_url", "url_decode"]),
    ("aes_decrypt(CAST(key AS BINARY), CAST(value AS BINARY)) IS NULL", ["aes_decrypt"]),
    ("reflect('java.lang.Runtime', 'getRuntime') IS NOT NULL", ["reflect"]),
    ("java_method('java.lang.System', 'getenv', 'SECRET_KEY') = 'x'", ["java_method"]),
    ("TRY_REFLECT('java.lang.Thread', 'sleep', 100) IS NULL", ["try_reflect"]),
    ("`java_method`('java.lang.System', 'exit', 0) IS NULL", ["java_method"]),
    ("input_file_name() LIKE '%'", ["input_file_name"]),
    ("length(read_files('/etc/passwd')) > 0", ["read_files"]),
    ("xpath_string(value, '/a') = 'b'", ["xpath_string"]),
    ("current_user() = 'root' OR current_user = 'root'", ["current_user"]),
    ("value = 'x' OR (partition = 0 AND upper(java_method('a', 'b')) = 'C')", ["java_method"]),
    ("spark_catalog.default.lower(value) = 'a'", ["lower"]),  # a catalog's function, not the built-in one
    # Java regular expressions backtrack: no regex function at all.
    ("value RLIKE '(a+)+$'", ["rlike"]),
    ("regexp_extract(value, '(a+)+$', 0) = 'a' OR regexp_like(value, 'b')", ["regexp_extract", "regexp_like"]),
    ("split(value, ',')[0] = 'a'", ["split"]),
    # Output a multiple of the input, or of a number.
    ("repeat(value, 1000000) = 'a'", ["repeat"]),
    ("space(100000000) = value", ["space"]),
    ("size(sequence(1, 100000000)) > 0", ["sequence"]),
    ("size(array_repeat(value, 100000000)) > 0", ["array_repeat"]),
    ("replace(value, 'a', value) = 'x'", ["replace"]),
    ("format_string('%999999999d', 1) = value", ["format_string"]),
    ("aggregate(headers, '', (a, h) -> concat(a, a)) = ''", ["aggregate"]),
    ("transform(headers, h -> value)[0] = 'x'", ["transform"]),
    # Other dialects' names for allowed functions: the list is of Spark's names.
    ("iif(partition = 0, true, false)", ["iif"]),
    ("strpos(value, 'a') > 0", ["strpos"]),
])
def test_anything_off_the_list_is_refused_by_name(expression, names):
    with pytest.raises(ConsoleError) as refused:
        filter_check(expression)
    assert refused.value.message.startswith("The filter may not use ")
    for name in names:
        assert re.search(rf"\b{name}\b", refused.value.message), refused.value.message


@pytest.mark.parametrize(("expression", "message"), [
    ("lpad(value, 1000000000, 'x') = 'a'", MSG_PAD_LENGTH),
    (f"rpad(value, {MAX_PAD_LENGTH + 1}) = 'a'", MSG_PAD_LENGTH),
    ("lpad(value, length(value) * 1000, 'x') = 'a'", MSG_PAD_LENGTH),
    ("value LIKE '%a%b%c'", MSG_LIKE_PATTERN),  # `.*a.*b.*c`: one pass per position per `%`
    ("value LIKE 'a%%b'", MSG_LIKE_PATTERN),
    ("value NOT ILIKE '%a%b'", MSG_LIKE_PATTERN),
    ("value LIKE key", MSG_LIKE_PATTERN),
    ("value LIKE 'a%' ESCAPE '!'", "may not use escape"),
    ("value LIKE ANY ('a%', 'b%')", "may not use any"),
    ("contains(value, key)", "contains() needs a string literal"),
    ("instr(value, key) > 0", "instr() needs a string literal"),
    ("CAST(value AS DECIMAL(38, 2)) > 1", "may cast to"),
    ("CAST(value AS MAP<STRING, STRING>) IS NULL", "may cast to"),
    ("'${env:CONSOLE_DRIVER_TOKEN}' LIKE 'a%'", MSG_SUBSTITUTION),
    ("value = '${spark.hadoop.fs.s3a.secret.key}'", MSG_SUBSTITUTION),
    ("value = ?", "may not use ?"),
    ("sum(partition) > 1", "may not use sum()"),
    ("amount > 1", "uses amount"),
    ("h.key = 'a'", "uses h.key"),
    ("exists(headers, h -> g.key = 'a')", "uses g.key"),
    ("value LIKE", "not a valid"),
    ("SELECT 1", "one boolean expression"),
    ("partition IN (SELECT 1)", "one boolean expression"),
    ("value = '" + "x" * filters.MAX_FILTER_CHARS + "'", MSG_TOO_LONG),
    ("(" * 70 + "partition = 0" + ")" * 70, "nests more than"),
])
def test_unbounded_or_unknown_expressions_are_refused(expression, message):
    with pytest.raises(ConsoleError, match=re.escape(message)):
        filter_check(expression)


def test_spark_gets_the_checked_tree_not_the_text():
    """A comment is where sqlglot and Spark could read text differently; Spark never sees one."""
    assert filter_spark_sql("value = 'a' -- x */ java_method('a','b') /*") == "value = 'a'"
    assert filter_spark_sql("value = 'a' /* note */ AND key = 'b'") == "value = 'a' AND key = 'b'"
    assert filter_spark_sql("nvl(key, 'x') = 'x'") == "COALESCE(key, 'x') = 'x'"


# Identifiers Spark could read as a call: letters, digits, underscores.
identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,24}", fullmatch=True)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(name=identifiers, arguments=st.sampled_from(["value", "value, 1", "value, 'a'", "", "headers, h -> true"]))
def test_a_random_function_name_passes_only_if_it_is_on_the_list(name, arguments):
    try:
        filter_check(f"{name}({arguments}) IS NULL")
    except ConsoleError as refused:
        if name.upper() not in Spark.Parser.FUNCTIONS and name.lower() not in SPARK_FUNCTIONS:
            # A name sqlglot does not know is an anonymous call: refused, by name. A random name can also be a word
            # of the grammar (CASE, INTERVAL...) that makes the text no expression at all: refused as not SQL.
            if not refused.message.startswith(MSG_BAD_FILTER.split("{error}")[0]):
                head, tail = MSG_NOT_ALLOWED.split("{names}")
                assert refused.message.startswith(head) and refused.message.endswith(tail), refused.message
                assert f"{name.lower()}()" in refused.message[len(head):-len(tail)].split(", "), refused.message
        return
    assert name.lower() in SPARK_FUNCTIONS | filters._SYNTAX_WORDS


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=120))
def test_hostile_text_is_refused_or_accepted_never_crashes(text):
    try:
        sql = filter_spark_sql(text)
    except ConsoleError:
        return
    assert "${" not in sql and "/*" not in sql and "--" not in sql.replace("'--'", "")
    assert filter_spark_sql(sql) == sql


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["a", "%", "_", "\\\\%", "b"]), max_size=8))
def test_like_patterns_pass_with_at_most_one_inner_wildcard(parts):
    pattern = "".join(parts)
    # Count the `%` Spark's regex would turn into a backtracking `.*` (escaped ones are literal).
    inner = sum(1 for i, part in enumerate(parts) if part == "%" and i < len(parts) - 1)
    try:
        filter_check(f"value LIKE '{pattern}'")
    except ConsoleError as refused:
        assert inner > 1 and refused.message == MSG_LIKE_PATTERN
    else:
        assert inner <= 1


@pytest.mark.spark
def test_allowed_filters_mean_the_same_in_spark_as_typed_and_as_regenerated(spark_session):
    """Spark runs the regenerated SQL: for every listed function it must select what the text as typed selects.
    Row 0 makes every example true; row 1 varies each column."""
    from datetime import datetime

    from pyspark.sql import functions as F

    schema = ("key string, value string, headers array<struct<key:string,value:binary>>, timestamp timestamp, "
              "topic string, partition int, offset long, timestampType int")
    records = spark_session.createDataFrame([
        ("k0", '{"kind":"even","n":0,"tags":["a","b"]}', [("trace", b"t0")], datetime(2026, 3, 1, 10, 30, 15), "t",
         0, 0, 0),
        (None, '{"kind":"odd","n":1}', [("other", b"x")], datetime(2025, 1, 2, 3, 4, 5), "u", 1, 1, 1),
    ], schema)
    examples = sorted(EXAMPLES.items())
    # Every example as typed and as regenerated, each a column of one query (a Spark job per example took most of
    # a minute); a row is selected where the filter is true, as WHERE selects it (null is not true).
    columns = [F.coalesce(F.expr(text), F.lit(False)).alias(f"{side}{i}")
               for i, (_, expression) in enumerate(examples)
               for side, text in (("typed", expression), ("regenerated", filter_spark_sql(expression)))]
    rows = records.select("offset", *columns).orderBy("offset").collect()
    for i, (name, expression) in enumerate(examples):
        typed = [row.offset for row in rows if row[f"typed{i}"]]
        regenerated = [row.offset for row in rows if row[f"regenerated{i}"]]
        assert typed == regenerated, (name, expression, filter_spark_sql(expression))
        assert typed[:1] == [0], (name, expression)  # true for the first row: it ran


@pytest.mark.spark
def test_spark_substitutes_variables_inside_quotes_which_is_why_they_are_refused(spark_session):
    from pyspark.sql import functions as F

    seen = spark_session.range(1).select(F.expr("'${spark.app.name}'").alias("v")).first().v
    assert seen == spark_session.conf.get("spark.app.name")
