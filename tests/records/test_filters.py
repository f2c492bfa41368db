"""The search's filters, compiled once per chunk (pure: fake messages, no broker)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.errors import ConsoleError
from console.kafka.errors import InvalidRequest
from console.kafka.records.filters import NOT_DECODED, check_filter, compile_test
from console.kafka.types import DecodedPart, ScanFilter
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
