"""Pure topic logic: filtering and sorting, config docs and units, record decoding, diffs and purge plans."""

import json

import pytest

from console.errors import ConsoleError
from gateway.kafka.types import ConfigEntryInfo, ConfigSynonym, OffsetAt, PartitionRef
from topics.configdocs import broker_default, human_bytes, human_duration_ms
from topics.decoding import decode_bytes
from topics.diffing import config_diff, purge_plan
from topics.listing import filter_topics
from topics.table import TopicRow


def _row(name, partitions=1, messages=0, internal=False, urp=0):
    return TopicRow(name=name, partitions=partitions, replication_factor=1, under_replicated=urp, offline=0,
                    messages=messages, internal=internal)


ROWS = [_row("orders", 6, 100), _row("orders.dlq", 1, 5), _row("Payments", 3, 50), _row("__consumer_offsets", 50, 9, True)]


def test_substring_search_is_case_insensitive_and_hides_internal_topics():
    assert [r.name for r in filter_topics(ROWS, query="PAY")] == ["Payments"]
    assert [r.name for r in filter_topics(ROWS, query="")] == ["Payments", "orders", "orders.dlq"]


def test_regex_search_and_internal_topics_on_request():
    assert [r.name for r in filter_topics(ROWS, query=r"^orders$", regex=True)] == ["orders"]
    assert [r.name for r in filter_topics(ROWS, query="offsets", include_internal=True)] == ["__consumer_offsets"]


def test_invalid_regex_is_a_clear_error():
    with pytest.raises(ConsoleError, match="does not compile"):
        filter_topics(ROWS, query="orders(", regex=True)


def test_sort_by_messages_descending():
    assert [r.name for r in filter_topics(ROWS, sort="messages", descending=True)] == ["orders", "Payments", "orders.dlq"]


@pytest.mark.parametrize(("ms", "text"), [("604800000", "7 days"), ("3600000", "1 hour"), ("-1", "forever"),
                                          ("1500", "1.5 seconds"), ("1234567", "≈20.6 minutes"), ("x", ""),
                                          ("9223372036854775807", "forever")])
def test_durations_in_human_units(ms, text):
    assert human_duration_ms(ms) == text


@pytest.mark.parametrize(("size", "text"), [("1073741824", "1 GiB"), ("1048588", "≈1.00 MiB"), ("-1", "unlimited"),
                                            ("512", "512 B")])
def test_sizes_in_human_units(size, text):
    assert human_bytes(size) == text


def test_broker_default_follows_kafka_synonyms_and_units():
    broker = {"log.retention.ms": None, "log.retention.minutes": None, "log.retention.hours": "168",
              "log.cleanup.policy": "delete", "message.max.bytes": "1048588"}

    assert broker_default("retention.ms", broker) == "604800000"
    assert broker_default("cleanup.policy", broker) == "delete"
    assert broker_default("max.message.bytes", broker) == "1048588"
    assert broker_default("no.such.config", broker) is None


@pytest.mark.parametrize(
    ("data", "kind", "text"),
    [(b'{"a": 1}', "json", '{\n  "a": 1\n}'), (b"hello", "text", "hello"), (b"42", "text", "42"),
     (b"\xff\x00\x01", "hex", "ff 00 01"), (None, "null", ""), (b"", "empty", "")],
)
def test_record_bytes_decode_as_json_text_or_hex(data, kind, text):
    decoded = decode_bytes(data)

    assert (decoded.kind, decoded.text) == (kind, text)


@pytest.mark.parametrize(("data", "kind", "text"), [
    (b"\x00\x07", "hex", "00 07"),  # a 2-byte counter: valid UTF-8, but nothing a page can show
    (b"\x1b[31mred", "hex", "1b 5b 33 31 6d 72 65 64"), (b"a\x7fb", "hex", "61 7f 62"),
    ("caf\u00e9\u0085".encode(), "hex", "63 61 66 c3 a9 c2 85"),
    (b"tab\tnew\nline\r\n", "text", "tab\tnew\nline\r\n"), ("東京 naïve".encode(), "text", "東京 naïve"),
])
def test_bytes_with_invisible_characters_are_binary(data, kind, text):
    assert (decode_bytes(data).kind, decode_bytes(data).text) == (kind, text)


def test_a_preview_is_one_line_and_short():
    assert decode_bytes(b'{"a": {"b": [1, 2]},\n "c": "x"}').preview == '{"a": {"b": [1, 2]}, "c": "x"}'
    assert decode_bytes(b"two\n  lines").preview == "two lines"
    long = decode_bytes(b"x" * 1000).preview
    assert len(long) == 240 and long.endswith("…")


def test_json_too_long_to_indent_stays_whole_when_compact_fits():
    data = json.dumps({"k": ["v" * 10] * 300}).encode()
    decoded = decode_bytes(data, max_chars=len(data) + 10)
    assert decoded.kind == "json" and json.loads(decoded.text) == json.loads(data)


def _entry(name, value, source, read_only=False, synonyms=()):
    return ConfigEntryInfo(name=name, value=value, source=source, is_default=source == "default",
                           read_only=read_only, sensitive=False, synonyms=synonyms)


def test_config_diff_shows_old_value_and_source_to_new():
    current = {"retention.ms": _entry("retention.ms", "3600000", "topic"),
               "segment.ms": _entry("segment.ms", "1000", "topic",
                                    synonyms=(ConfigSynonym("segment.ms", "1000", "topic"),
                                              ConfigSynonym("log.roll.hours", "604800000", "default")))}

    changes = config_diff(current, set_values={"retention.ms": "86400000", "bogus.key": "1"}, delete=["segment.ms"],
                          inherited={"segment.ms": "604800000"})

    by_name = {c.name: c for c in changes}
    assert (by_name["retention.ms"].old_value, by_name["retention.ms"].old_source, by_name["retention.ms"].new_value) == (
        "3600000", "topic", "86400000")
    assert by_name["segment.ms"].action == "remove" and by_name["segment.ms"].new_value == "604800000"
    assert by_name["bogus.key"].unknown


def test_purge_plan_clamps_to_the_log_and_counts_records():
    starts = {PartitionRef("t", 0): OffsetAt(10), PartitionRef("t", 1): OffsetAt(0)}
    ends = {PartitionRef("t", 0): OffsetAt(100), PartitionRef("t", 1): OffsetAt(5)}

    rows = purge_plan("t", {0: 50, 1: None}, starts, ends)

    assert [(r.partition, r.target, r.records_deleted, r.clamped) for r in rows] == [(0, 50, 40, False), (1, 5, 5, False)]
    beyond = purge_plan("t", {0: 500, 1: 0}, starts, ends)
    assert [(r.target, r.records_deleted, r.clamped) for r in beyond] == [(100, 90, True), (0, 0, False)]


def test_replica_infos_parse_from_the_java_clients_text():
    from gateway.kafka.java.ops_log_dirs import parse_replica_infos
    from gateway.kafka.types import PartitionRef

    text = ("{orders-2-5=ReplicaInfo(size=1024, offsetLag=0, isFuture=false), "
            "__consumer_offsets-0=ReplicaInfo(size=0, offsetLag=0, isFuture=false), "
            "a.b_c-12=ReplicaInfo(size=9, offsetLag=-1, isFuture=true)}")
    assert parse_replica_infos(text) == [(PartitionRef("orders-2", 5), 1024, 0, False),
                                         (PartitionRef("__consumer_offsets", 0), 0, 0, False),
                                         (PartitionRef("a.b_c", 12), 9, -1, True)]
    assert parse_replica_infos("{}") == []
