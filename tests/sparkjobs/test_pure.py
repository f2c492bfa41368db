import pytest

from console.errors import ConsoleError
from sparkjobs import bounds
from sparkjobs.filters import filter_check


def test_start_and_end_forms():
    assert bounds.parse_start("earliest") == bounds.Earliest()
    assert bounds.parse_start("offsets:0=5,2=7") == bounds.Offsets({0: 5, 2: 7})
    assert bounds.parse_start("group:billing") == bounds.GroupCommitted("billing")
    assert bounds.parse_start("reset:42") == bounds.SkippedByReset(42)
    assert bounds.parse_start("timestamp:2026-01-01T00:00:00Z") == bounds.AtTime(1767225600000)
    assert bounds.parse_end("timestamp:2026-01-01T01:00:00+01:00") == bounds.AtTime(1767225600000)
    assert bounds.parse_end("latest") == bounds.Latest()


@pytest.mark.parametrize("text", ["latest", "offsets:a=1", "timestamp:yesterday", "group:", "soon"])
def test_bad_starts_are_named(text):
    with pytest.raises(ConsoleError, match="Cannot read"):
        bounds.parse_start(text)


def test_ranges_are_clamped_to_the_log_and_never_negative():
    assert bounds.clamp_ranges({0: -5, 1: 50}, {0: 1000, 1: 10}, {0: 2, 1: 0}, {0: 100, 1: 60}) == {
        0: (2, 100), 1: (50, 50)}


@pytest.mark.parametrize("expression", ["value LIKE '%x%'", "partition = 0 AND key IS NOT NULL",
                                        "exists(headers, h -> h.key = 'trace')", ""])
def test_good_filters(expression):
    assert filter_check(expression) == expression


@pytest.mark.parametrize(("expression", "message"), [("amount > 1", "uses amount"), ("value LIKE", "not a valid"),
                                                     ("SELECT 1", "one boolean expression")])
def test_bad_filters(expression, message):
    with pytest.raises(ConsoleError, match=message):
        filter_check(expression)


@pytest.mark.parametrize("expression", [
    "reflect('java.lang.Runtime', 'getRuntime') IS NOT NULL",
    "java_method('java.lang.System', 'getenv', 'SECRET_KEY') = 'x'",
    "TRY_REFLECT('java.lang.Thread', 'sleep', 100) IS NULL",
    "input_file_name() LIKE '%'",
    "length(read_files('/etc/passwd')) > 0",
    "xpath_string(value, '/a') = 'b'",
    "current_user() = 'root'",
    "value = 'x' OR (partition = 0 AND upper(java_method('a', 'b')) = 'C')",
])
def test_filters_cannot_reach_the_jvm_files_or_the_session(expression):
    with pytest.raises(ConsoleError, match="may not call"):
        filter_check(expression)
