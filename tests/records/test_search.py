"""Topic search on the real broker: the same records a plain consumer finds on the same range, whatever the
filters, the order or the chunking; budgets that say they ran out; bad input refused before any read."""

from __future__ import annotations

import random
import re
import time
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition

from console.errors import ConsoleError
from gateway.kafka.errors import InvalidRequest, TopicNotFound
from gateway.kafka.types import ScanFilter
from records.search import Bound, SearchSpec, search_begin, search_step, search_stop

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]

WORDS = ["refund", "payment", "naïve", "東京", "billing", "x%y", "<b>", "a/b", "#tag", "needle"]


def _all(state, step_s: float = 0.2):
    found = []
    while not state.done:
        state, matches = search_step(state, step_s=step_s)
        found.extend(matches)
    return state, found


def _plain_consumer(bootstrap: str, topic: str, cursors, keep) -> set[tuple[int, int]]:
    """A plain confluent-kafka consumer over the same offsets, with the filter in Python."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"plain-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "isolation.level": "read_committed"})
    ends = {c.partition: c.high for c in cursors if c.high > c.low}
    consumer.assign([TopicPartition(topic, c.partition, c.low) for c in cursors if c.high > c.low])
    found = set()
    while ends:
        for m in consumer.consume(1000, timeout=1):
            if m.partition() not in ends:
                continue
            if m.error() or m.offset() >= ends[m.partition()]:
                ends.pop(m.partition(), None)
                continue
            if keep(m):
                found.add((m.partition(), m.offset()))
            if m.offset() + 1 >= ends.get(m.partition(), 0):
                ends.pop(m.partition(), None)
    consumer.close()
    return found


@pytest.fixture
def busy_topic(topic_factory, produce, local_cluster):
    rng = random.Random(7)
    topic = topic_factory("search", partitions=4)
    records = []
    for i in range(4000):
        words = " ".join(rng.choice(WORDS) for _ in range(3))
        headers = [("source", rng.choice([b"web", b"batch", None]))] if i % 3 else None
        records.append((i % 4, f"key-{i % 97}".encode(), f"{i} {words}".encode(), headers))
    produce(topic, records)
    return topic


@pytest.mark.parametrize("scan_filter, keep", [
    (ScanFilter(value_contains="billing"), lambda m: b"billing" in m.value()),
    (ScanFilter(value_contains="東京 naïve"), lambda m: "東京 naïve".encode() in m.value()),
    (ScanFilter(value_regex=r"^\d*7 (refund|payment)"),
     lambda m: re.search(rb"^\d*7 (refund|payment)", m.value()) is not None),
    (ScanFilter(key_contains="key-5", value_contains="<b>"),
     lambda m: b"key-5" in m.key() and b"<b>" in m.value()),
    (ScanFilter(header_name="source", header_contains="bat"),
     lambda m: any(k == "source" and v and b"bat" in v for k, v in m.headers() or [])),
], ids=["substring", "unicode", "regex", "key-and-value", "header"])
def test_search_finds_what_a_plain_consumer_finds(busy_topic, kafka_node, scan_filter, keep):
    state = search_begin("local", SearchSpec(topic=busy_topic, filter=scan_filter, max_matches=10_000))
    assert state.total == 4000
    state, found = _all(state)
    assert state.ended_because == "range" and state.scanned == 4000 and state.percent == 100.0
    expected = _plain_consumer(kafka_node.bootstrap, busy_topic, state.cursors, keep)
    assert expected and {(m.record.partition, m.record.offset) for m in found} == expected
    assert state.matched == len(found) == len(expected)


def test_newest_first_and_chosen_partitions_and_offsets(busy_topic, kafka_node):
    spec = SearchSpec(topic=busy_topic, partitions=(1, 3), start=Bound("offset", 100), end=Bound("offset", 900),
                      filter=ScanFilter(value_contains="refund"), newest_first=True, max_matches=10_000)
    state, found = _all(search_begin("local", spec))
    assert [(c.partition, c.low, c.high) for c in state.cursors] == [(1, 100, 900), (3, 100, 900)]
    expected = _plain_consumer(kafka_node.bootstrap, busy_topic, state.cursors, lambda m: b"refund" in m.value())
    assert {(m.record.partition, m.record.offset) for m in found} == expected
    stamps = [(m.record.timestamp, m.record.offset) for m in found[:50]]
    assert stamps == sorted(stamps, reverse=True)  # the newest first


def test_time_range_is_resolved_to_offsets(topic_factory, local_cluster, kafka_node):
    from confluent_kafka import Producer

    topic = topic_factory("search-time", partitions=2)
    producer = Producer({"bootstrap.servers": kafka_node.bootstrap})
    base = 1_790_000_000_000
    for i in range(100):
        producer.produce(topic, value=b"v%d" % i, partition=i % 2, timestamp=base + i * 1000)
    producer.flush(15)
    spec = SearchSpec(topic=topic, start=Bound("time", base + 20_000), end=Bound("time", base + 29_000))
    state, found = _all(search_begin("local", spec))
    assert sorted(int(m.record.value[1:]) for m in found) == list(range(20, 30))
    assert all(base + 20_000 <= m.record.timestamp <= base + 29_000 for m in found)


def test_budgets_say_they_ran_out(busy_topic):
    state, found = _all(search_begin("local", SearchSpec(topic=busy_topic, max_records=300)))
    assert state.ended_because == "records budget" and state.scanned == 300 and len(found) == 300
    state, found = _all(search_begin("local", SearchSpec(topic=busy_topic, max_matches=7,
                                                         filter=ScanFilter(value_contains="payment"))))
    assert state.ended_because == "match limit" and len(found) == 7
    state = search_begin("local", SearchSpec(topic=busy_topic, max_seconds=0.001))
    time.sleep(0.01)
    state, found = _all(state)
    assert state.ended_because == "time budget" and state.covered < state.total and found == []


def test_stop_and_the_state_token(busy_topic):
    state = search_begin("local", SearchSpec(topic=busy_topic, filter=ScanFilter(value_contains="needle")))
    again = type(state).from_token(state.token())
    assert again.cursors == state.cursors and again.spec == state.spec
    stopped = search_stop(again)
    assert stopped.done and stopped.ended_because == "stopped"
    with pytest.raises(ConsoleError, match="not recognised"):
        type(state).from_token(state.token()[:-3] + "abc")


def test_aborted_records_are_not_found_read_committed(topic_factory, local_cluster, kafka_node):
    from tests.fixtures.kafka import begin_transaction

    topic = topic_factory("search-tx", partitions=1)
    producer = begin_transaction(kafka_node.bootstrap, topic, [b"aborted needle"] * 3)
    producer.abort_transaction(15)
    state, found = _all(search_begin("local", SearchSpec(topic=topic, filter=ScanFilter(value_contains="needle"))))
    assert found == [] and state.ended_because == "range"
    spec = SearchSpec(topic=topic, filter=ScanFilter(value_contains="needle"), isolation="read_uncommitted")
    assert len(_all(search_begin("local", spec))[1]) == 3


def test_bad_input_is_refused_before_any_read(busy_topic):
    with pytest.raises(TopicNotFound):
        search_begin("local", SearchSpec(topic=f"missing-{uuid.uuid4().hex}"))
    with pytest.raises(ConsoleError, match="no partition 9"):
        search_begin("local", SearchSpec(topic=busy_topic, partitions=(9,)))
    state = search_begin("local", SearchSpec(topic=busy_topic, filter=ScanFilter(value_regex="(")))
    with pytest.raises(InvalidRequest, match="does not compile"):
        search_step(state)
