"""The search's filters, compiled once per chunk (pure: fake messages, no broker)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.errors import ConsoleError
from gateway.kafka.errors import InvalidRequest
from gateway.kafka.records_io.filters import NOT_DECODED, check_filter, compile_test
from gateway.kafka.types import DecodedPart, ScanFilter
from records.search import MSG_BAD_BOUND, Bound, parse_bound, parse_fields, parse_partitions


class FakeMessage:
    def __init__(self, value: bytes | None, key: bytes | None = None, headers=None, ts: int = 0) -> None:
        self._value, self._key, self._headers, self._ts = value, key, headers, ts

    def value(self):
        return self._value

    def key(self):
        return self._key

    def headers(self):
        return self._headers

    def timestamp(self):
        return (1, self._ts)


def keeps(spec: ScanFilter, message: FakeMessage, decode=None) -> bool:
    test = compile_test(spec, decode)
    return test is None or test(message) is not None


def test_no_filter_keeps_everything():
    assert compile_test(ScanFilter(), None) is None


@given(st.binary(max_size=60), st.text(min_size=1, max_size=5))
def test_substring_on_raw_bytes_is_pythons_in(value, needle):
    assert keeps(ScanFilter(value_contains=needle), FakeMessage(value)) == (needle.encode() in value)


@given(st.text(max_size=40), st.sampled_from([r"\d+", r"^a", r"b$", r"(x|y)z", r"[^\x00-\x7f]"]))
def test_regex_on_raw_bytes_is_re_search(text, pattern):
    value = text.encode()
    assert keeps(ScanFilter(value_regex=pattern), FakeMessage(value)) == bool(re.search(pattern.encode(), value))


def test_null_values_never_match_a_value_filter():
    assert not keeps(ScanFilter(value_contains="x"), FakeMessage(None))
    assert not keeps(ScanFilter(value_fields=(("a", "1"),)), FakeMessage(None))


def test_fields_and_jsonpath_on_plain_json():
    order = FakeMessage(json.dumps({"customer": {"country": "NO"}, "amount": 150, "paid": True,
                                    "items": [{"sku": "A-1"}, {"sku": "B-2"}]}).encode())
    assert keeps(ScanFilter(value_fields=(("customer.country", "NO"), ("amount", "150"))), order)
    assert keeps(ScanFilter(value_fields=(("paid", "true"), ("items.1.sku", "B-2"))), order)
    assert not keeps(ScanFilter(value_fields=(("customer.country", "SE"),)), order)
    assert not keeps(ScanFilter(value_fields=(("customer.missing", "NO"),)), order)
    assert keeps(ScanFilter(value_jsonpath="$.items[?@.sku == 'A-1']"), order)
    assert keeps(ScanFilter(value_jsonpath="$[?@.amount > 100]"), order)
    assert not keeps(ScanFilter(value_jsonpath="$[?@.amount > 200]"), order)
    assert not keeps(ScanFilter(value_jsonpath="$.x"), FakeMessage(b"not json"))


def test_decoded_records_are_filtered_on_their_json():
    decoded = DecodedPart("avro", {"country": "NO", "note": "naïve"})
    test = compile_test(ScanFilter(value_contains='"country":"NO"', value_fields=(("note", "naïve"),)),
                        lambda data, is_key: decoded)
    assert test(FakeMessage(b"\x00\x00\x00\x00\x01raw")) == (None, decoded)


def test_headers_keys_and_time():
    message = FakeMessage(b"v", key=b"order-7", headers=[("trace", b"abc"), ("empty", None)], ts=1000)
    assert keeps(ScanFilter(header_name="trace", header_contains="b"), message)
    assert keeps(ScanFilter(header_name="empty"), message)
    assert not keeps(ScanFilter(header_name="empty", header_contains="x"), message)
    assert keeps(ScanFilter(key_regex=r"-\d$"), message) and not keeps(ScanFilter(key_contains="9"), message)
    assert keeps(ScanFilter(ts_from_ms=1000, ts_to_ms=1000), message)
    assert not keeps(ScanFilter(ts_from_ms=1001), message) and not keeps(ScanFilter(ts_to_ms=999), message)
    assert compile_test(ScanFilter(value_contains="v"), None)(message) is NOT_DECODED


@pytest.mark.parametrize("spec", [ScanFilter(value_regex="("), ScanFilter(key_regex="[a-"),
                                  ScanFilter(value_jsonpath="$[?"), ScanFilter(value_jsonpath="no dollar")])
def test_what_does_not_compile_is_refused(spec):
    with pytest.raises(InvalidRequest, match="does not compile"):
        check_filter(spec)


def test_bounds_partitions_and_fields_parse():
    assert parse_bound("", "earliest") == Bound("earliest") and parse_bound("42", "earliest") == Bound("offset", 42)
    assert parse_bound("2026-11-21T03:00:00Z", "latest") == Bound("time", 1795230000000)
    assert parse_bound("2026-11-21T04:00:00+01:00", "latest") == Bound("time", 1795230000000)
    assert parse_partitions(" 2, 0,2 ") == (0, 2) and parse_partitions("") is None
    assert parse_fields(["a.b = x=y", ""]) == (("a.b", "x=y"),)
    for bad in ("yesterday", "-5"):
        with pytest.raises(ConsoleError) as refused:
            parse_bound(bad, "earliest")
        assert refused.value.message == MSG_BAD_BOUND.format(text=bad)


class PlacedMessage(FakeMessage):
    def partition(self):
        return 3

    def offset(self):
        return 41


def test_a_jsonpath_is_bounded_in_length_and_descendant_steps():
    from gateway.kafka.records_io.filters import (
        MAX_DESCENDANT_STEPS, MSG_JSONPATH_DESCENDANTS, MSG_JSONPATH_TOO_LONG,
    )

    expression = "$..*..*..*..*..*"  # the review's: 10.6 s on a 282-byte record nested 40 deep
    with pytest.raises(InvalidRequest) as refused:
        check_filter(ScanFilter(value_jsonpath=expression))
    assert refused.value.message == MSG_JSONPATH_DESCENDANTS.format(expression=expression, limit=MAX_DESCENDANT_STEPS)
    with pytest.raises(InvalidRequest, match=re.escape(MSG_JSONPATH_TOO_LONG.format(limit=300))):
        check_filter(ScanFilter(value_jsonpath="$." + "a." * 200 + "b"))
    check_filter(ScanFilter(value_jsonpath="$['a..b..c..d']..x..y"))  # dots inside a name are not steps


def test_a_jsonpath_stops_at_its_work_budget_inside_one_record():
    from gateway.kafka.records_io.filters import MAX_JSONPATH_NODES, MSG_JSONPATH_DEEP, MSG_JSONPATH_WORK

    wide = PlacedMessage(json.dumps([0] * 150_000).encode())
    assert keeps(ScanFilter(value_jsonpath="$..*"), wide)  # stops at the first node it finds
    with pytest.raises(InvalidRequest) as over:
        keeps(ScanFilter(value_jsonpath="$..*..nope"), wide)
    assert over.value.message == MSG_JSONPATH_WORK.format(expression="$..*..nope", partition=3, offset=41,
                                                          limit=MAX_JSONPATH_NODES)
    deep = PlacedMessage(("[" * 150 + "]" * 150).encode())
    with pytest.raises(InvalidRequest) as too_deep:
        keeps(ScanFilter(value_jsonpath="$..nope"), deep)
    assert too_deep.value.message == MSG_JSONPATH_DEEP.format(expression="$..nope", partition=3, offset=41)
    very_deep = PlacedMessage(("[" * 200_000 + "]" * 200_000).encode())
    assert not keeps(ScanFilter(value_jsonpath="$..nope"), very_deep)  # past the JSON parser's depth: not JSON


def test_a_jsonpath_holds_the_scans_deadline_inside_a_record(monkeypatch):
    import time

    from gateway.kafka.records_io import filters
    from gateway.kafka.records_io.filters import MSG_JSONPATH_SLOW

    monkeypatch.setattr(filters, "RECORD_GRACE_S", 0.0)  # no second of grace: the deadline alone stops it
    wide = PlacedMessage(json.dumps([[0] * 300 for _ in range(300)]).encode())
    test = compile_test(ScanFilter(value_jsonpath="$..*..nope"), None, deadline=time.monotonic() - 1)
    with pytest.raises(InvalidRequest) as late:
        test(wide)
    assert late.value.message == MSG_JSONPATH_SLOW.format(expression="$..*..nope", partition=3, offset=41)
    assert compile_test(ScanFilter(value_jsonpath="$..*..nope"), None)(wide) is None  # no deadline: it ends


def test_a_dotted_path_step_is_an_index_only_in_ascii_digits():
    from gateway.kafka.records_io.filters import field_path, list_index

    assert list_index("00") == 0 and list_index("²") is None and list_index("٣") is None
    assert field_path({"items": [{"card": "x"}]}, ["items", "00", "card"]) == "x"
    assert keeps(ScanFilter(value_fields=(("items.².card", "x"),)), FakeMessage(b'{"items": [{"card": "x"}]}')) is False
