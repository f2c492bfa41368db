"""changes/patterns.py: globs and allowlisted regular expressions over arbitrary Kafka names. Pure."""

from __future__ import annotations

import time

import pytest

from changes.patterns import PatternError, any_matches, check_regex, parse_pattern

HOSTILE = ["a/b c", "pay#1%", "quote'\"d", "<b>x</b>", "ünïcødé-主题", "a\nb", "*", "re:x"]


@pytest.mark.parametrize(("pattern", "name", "expected"), [
    ("orders-*", "orders-eu", True),
    ("orders-*", "xorders-eu", False),
    ("orders-?", "orders-1", True),
    ("Orders-*", "orders-1", False),  # Kafka names are case-sensitive, and so are patterns
    ("[ab]-x", "b-x", True),
    ("a/b *", "a/b c", True),
    ("pay#*%", "pay#1%", True),
    ("glob:re:*", "re:x", True),  # a glob that starts with re: is written glob:re:...
    ("*<b>*", "<b>x</b>", True),
    ("ünïcødé-*", "ünïcødé-主题", True),
    ("*", "a\nb", True),
    ("re:orders-(eu|us)", "orders-eu", True),
    ("re:orders-(eu|us)", "orders-eu-2", False),  # the whole name
    ("re:pay\\.\\d{1,3}", "pay.12", True),
    ("re:[^/]+/[^/]+", "a/b c", True),
    ("re:(?:ab)+c", "ababc", True),
    ("re:quote'\"d", "quote'\"d", True),
])
def test_patterns_match_whole_names(pattern, name, expected):
    assert parse_pattern(pattern).matches(name) is expected


@pytest.mark.parametrize("expression", [
    "(a+)+$", "(a|aa)*", "((a)+)*", "(?=a)", "(?<!a)b", "(?P<x>a)", "(?i)a", "(a)\\1", "a**", "+a", "a{1,5000}",
    "(a", "a)", "[a", "\\bword", "a{,", "(?:x|y)+",
])
def test_regexes_outside_the_allowlist_are_refused(expression):
    with pytest.raises(PatternError):
        check_regex(expression)
    with pytest.raises(PatternError, match="is refused"):
        parse_pattern("re:" + expression)


@pytest.mark.parametrize("expression", [
    "orders-.*", "^a[0-9]+$", "(ab)+", "(?:a|b)c", "a{2,3}?", "\\d\\w\\s\\S\\.\\-\\/", "[]a]", "[^\\]]+", "x|y|z",
])
def test_regexes_inside_the_allowlist_are_accepted(expression):
    check_regex(expression)
    parse_pattern("re:" + expression)


def test_an_allowed_regex_stays_fast_on_a_crafted_name():
    pattern = parse_pattern("re:(a)+b|a*c")
    started = time.monotonic()
    assert not pattern.matches("a" * 50_000 + "!")
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("text", ["", "   ", "re:", "glob:", "x" * 201])
def test_empty_or_long_patterns_are_refused(text):
    with pytest.raises(PatternError):
        parse_pattern(text)


def test_a_stored_pattern_that_no_longer_parses_protects_everything():
    assert any_matches(["re:(a+)+"], "anything") is True
    assert any_matches(["orders-*"], "billing") is False
    assert any_matches([], "billing") is False
