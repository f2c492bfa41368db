"""The browser's reads against the real broker: newest first across partitions is what a raw consumer calls the
newest records, each page goes on from the last one's cursor (asked, not re-read), and the live tail brings only
what was written above the tops."""

from __future__ import annotations

import time

from dataclasses import replace

import pytest

from gateway.kafka.admin import KafkaAdmin
from records.browse import BrowseQuery, browse_page, browse_tail, format_cursor, parse_cursor

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]

BASE_MS = 1_790_000_000_000


@pytest.fixture
def timed_topic(topic_factory, kafka_node, local_cluster):
    """3 partitions with 60, 90 and 150 records; record i stamped BASE_MS + i seconds, whatever its partition."""
    from confluent_kafka import Producer

    topic = topic_factory("browse-timed", partitions=3)
    producer = Producer({"bootstrap.servers": kafka_node.bootstrap, "linger.ms": 5})
    for i in range(300):
        partition = 0 if i % 10 < 2 else 1 if i % 10 < 5 else 2
        producer.produce(topic, key=f"k{i}".encode(), value=b'{"n": %d}' % i, partition=partition,
                         timestamp=BASE_MS + i * 1000)
    assert producer.flush(30) == 0
    return topic


def _raw_records(bootstrap: str, topic: str) -> list[tuple[int, int, int]]:
    """(timestamp, partition, offset) of every record, read by a plain assign-only consumer up to each partition's
    high watermark as Kafka gives it now (an error, or an end reported before it, is not the end: under load it came
    early once and the oracle missed records)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "browse-oracle", "enable.auto.commit": False})
    partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
    ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions}
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    found, next_offset = [], dict.fromkeys(partitions, 0)
    deadline = time.monotonic() + 60
    while any(next_offset[p] < ends[p] for p in partitions):
        assert time.monotonic() < deadline, f"the oracle read {next_offset} of {ends}"
        for message in consumer.consume(500, timeout=1):
            if not message.error():
                found.append((message.timestamp()[1], message.partition(), message.offset()))
                next_offset[message.partition()] = message.offset() + 1
    consumer.close()
    return found


@pytest.fixture
def scan_requests(settings, monkeypatch):
    """The scan requests the browser makes (cursors asked) and what each read, through the real gateway."""
    settings.KAFKA_CLIENT_ISOLATION = False  # the spy sees calls made in this process
    asked = []
    real = KafkaAdmin.scan_chunk

    def spy(self, request):
        chunk = real(self, request)
        asked.append((request, chunk))
        return chunk

    monkeypatch.setattr(KafkaAdmin, "scan_chunk", spy)
    return asked


def test_newest_first_across_partitions_is_a_raw_consumers_newest(timed_topic, kafka_node):
    raw = sorted(_raw_records(kafka_node.bootstrap, timed_topic), reverse=True)
    first = browse_page("local", timed_topic, BrowseQuery(limit=50))
    assert [(r.timestamp, r.partition, r.offset) for r in first.rows] == raw[:50]
    # By offset per partition: each partition shows its last offsets, none skipped.
    for partition in range(3):
        shown = sorted(r.offset for r in first.rows if r.partition == partition)
        newest = sorted(o for _, p, o in raw if p == partition)[-len(shown):] if shown else []
        assert shown == newest
    assert first.more and first.tops == {0: 60, 1: 90, 2: 150}
    second = browse_page("local", timed_topic, BrowseQuery(limit=50), after=first.cursor)
    assert [(r.timestamp, r.partition, r.offset) for r in second.rows] == raw[50:100]
    assert second.tops == {}  # only the first page starts the tail


def test_each_page_asks_only_the_next_offsets(timed_topic, scan_requests):
    first = browse_page("local", timed_topic, BrowseQuery(limit=50))
    second = browse_page("local", timed_topic, BrowseQuery(limit=50), after=first.cursor)
    (request_1, chunk_1), (request_2, chunk_2) = scan_requests
    assert {c.partition: c.next for c in request_1.cursors} == {0: 60, 1: 90, 2: 150}
    assert {c.partition: c.next for c in request_2.cursors} == first.cursor
    # A page of 50 reads at most 50 offsets a partition: nothing below the page, nothing above the cursor.
    assert chunk_1.scanned <= 150 and chunk_2.scanned <= 150
    assert {c.partition: c.next for c in chunk_2.cursors} == second.cursor


def test_oldest_first_and_from_a_time_go_on_from_their_cursor(timed_topic):
    oldest = browse_page("local", timed_topic, BrowseQuery(start="oldest", limit=40))
    shown = {(r.partition, r.offset) for r in oldest.rows}
    assert len(shown) == 40 and all(
        r.offset < oldest.cursor[r.partition] for r in oldest.rows)
    after = browse_page("local", timed_topic, BrowseQuery(start="oldest", limit=40), after=oldest.cursor)
    assert not shown & {(r.partition, r.offset) for r in after.rows} and len(after.rows) == 40
    timed = browse_page("local", timed_topic, BrowseQuery(start="time", time_ms=BASE_MS + 290_000, limit=50))
    assert sorted(r.timestamp for r in timed.rows) == [BASE_MS + i * 1000 for i in range(290, 300)]
    assert not timed.more


def test_one_partition_newest_first_then_older_pages(timed_topic):
    query = BrowseQuery(partition=2, limit=60)
    first = browse_page("local", timed_topic, query)
    assert [r.offset for r in first.rows] == list(range(149, 89, -1)) and first.cursor == {2: 90}
    second = browse_page("local", timed_topic, query, after=first.cursor)
    assert [r.offset for r in second.rows] == list(range(89, 29, -1))
    third = browse_page("local", timed_topic, query, after=second.cursor)
    assert [r.offset for r in third.rows] == list(range(29, -1, -1)) and not third.more
    from_offset = browse_page("local", timed_topic, BrowseQuery(start="offset", partition=1, offset=85, limit=10))
    assert [r.offset for r in from_offset.rows] == [85, 86, 87, 88, 89] and not from_offset.more


def test_filters_and_a_partition_list(timed_topic):
    found = browse_page("local", timed_topic, BrowseQuery(key="k29", limit=50))
    assert sorted(r.key.text for r in found.rows) == ["k29", "k290", "k291", "k292", "k293", "k294", "k295",
                                                      "k296", "k297", "k298", "k299"]
    only = browse_page("local", timed_topic, BrowseQuery(partition=0, value='"n": 1', limit=500))
    assert {r.partition for r in only.rows} == {0} and all('"n": 1' in r.value.text for r in only.rows)


def test_the_tail_brings_only_new_records(timed_topic, produce):
    first = browse_page("local", timed_topic, BrowseQuery(limit=5))
    assert browse_tail("local", timed_topic, BrowseQuery(), first.tops) is None
    produce(timed_topic, [(0, b"new-a", b"a", None), (2, b"new-b", b"b", None)])
    tail = browse_tail("local", timed_topic, BrowseQuery(), first.tops)
    assert sorted(r.key.text for r in tail.rows) == ["new-a", "new-b"]
    assert tail.tops == {0: 61, 1: 90, 2: 151}
    assert browse_tail("local", timed_topic, BrowseQuery(), tail.tops) is None
    filtered = browse_tail("local", timed_topic, replace(BrowseQuery(), key="new-b"), first.tops)
    assert [r.key.text for r in filtered.rows] == ["new-b"]


def test_cursor_text_round_trips_and_refuses_anything_else():
    assert parse_cursor(format_cursor({2: 7, 0: 120})) == {0: 120, 2: 7}
    assert parse_cursor("") == {}
    from console.errors import ConsoleError

    for bad in ("0:1;1:2", "-1:4", "0:", "a:b", "0:1,", "0:1 ,1:2"):
        with pytest.raises(ConsoleError):
            parse_cursor(bad)


def test_a_hundred_thousand_records_the_second_page_reads_on(topic_factory, kafka_node, local_cluster,
                                                              scan_requests, settings, monkeypatch):
    from confluent_kafka import Producer

    topic = topic_factory("browse-big", partitions=4)
    producer = Producer({"bootstrap.servers": kafka_node.bootstrap, "linger.ms": 20, "batch.num.messages": 10_000})
    for i in range(100_000):
        while True:
            try:
                producer.produce(topic, value=b'{"i": %d}' % i, partition=i % 4)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(60) == 0
    first = browse_page("local", topic, BrowseQuery(limit=50))
    second = browse_page("local", topic, BrowseQuery(limit=50), after=first.cursor)
    (request_1, chunk_1), (request_2, chunk_2) = scan_requests
    assert {c.partition: c.next for c in request_1.cursors} == {p: 25_000 for p in range(4)}
    assert {c.partition: c.next for c in request_2.cursors} == first.cursor
    assert min(first.cursor.values()) > 24_900  # the second page starts near the top, not at offset 0
    assert chunk_1.scanned + chunk_2.scanned <= 2 * 4 * 50
    assert not {(r.partition, r.offset) for r in first.rows} & {(r.partition, r.offset) for r in second.rows}
    # Oldest first, the same: the second page starts where the first stopped.
    scan_requests.clear()
    oldest = browse_page("local", topic, BrowseQuery(start="oldest", limit=50))
    browse_page("local", topic, BrowseQuery(start="oldest", limit=50), after=oldest.cursor)
    assert {c.partition: c.next for c in scan_requests[1][0].cursors} == oldest.cursor
    assert sum(c.next for c in scan_requests[1][0].cursors) == 50
    # One partition, read offset by offset: the page asks the reader for the offsets below the cursor only.
    asked = []
    real = KafkaAdmin.read_records

    def spy(self, topic_name, partition, **kwargs):
        asked.append((partition, kwargs["start"], kwargs["end"]))
        return real(self, topic_name, partition, **kwargs)

    monkeypatch.setattr(KafkaAdmin, "read_records", spy)
    one = browse_page("local", topic, BrowseQuery(partition=3, limit=50))
    browse_page("local", topic, BrowseQuery(partition=3, limit=50), after=one.cursor)
    assert [(p, start, end) for p, start, end in asked] == [(3, 24_950, 25_000), (3, 24_900, 24_950)]
