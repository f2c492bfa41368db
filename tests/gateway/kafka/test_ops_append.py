"""Conditional transactional appends on the real broker: the partition says how far it got, a stale writer writes
nothing, and a writer left behind with an open transaction is fenced and its records never become visible."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaException

from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.errors import TopicNotFound
from gateway.kafka.isolated import IsolatedKafkaAdmin
from gateway.kafka.types import ClusterConnection
from tests.fixtures.kafka import begin_transaction

pytestmark = pytest.mark.kafka


@pytest.fixture
def admin(kafka_node) -> KafkaAdmin:
    return KafkaAdmin(ClusterConnection("append", kafka_node.bootstrap), timeout=5.0)


def _records(*keys: int) -> tuple[tuple[bytes, bytes], ...]:
    return tuple((str(k).encode(), f"value {k}".encode()) for k in keys)


def _settled_tail(admin: KafkaAdmin, topic: str):
    """The tail once every transaction's marker is written: the coordinator writes them after EndTxn answers, so
    for a moment the stable end still stops before a batch just committed."""
    deadline = time.monotonic() + 10
    while (tail := admin.last_committed_record(topic)).stable_end < tail.log_end:
        assert time.monotonic() < deadline, "transaction markers not written within 10 s"
        time.sleep(0.1)
    return tail


def test_append_only_after_the_expected_last_record(admin, topic_factory):
    topic = topic_factory("append")

    assert admin.last_committed_record(topic).last is None
    first = admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=None, records=_records(1, 2))
    stale = admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=None, records=_records(1))
    second = admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=b"2", records=_records(3))

    assert first.appended and first.last.key == b"2" and first.last.offset == 1
    assert not stale.appended and stale.last.key == b"2"
    assert second.appended and second.last.key == b"3"
    tail = _settled_tail(admin, topic)
    assert (tail.last.key, tail.last.value) == (b"3", b"value 3")
    # Two transactions: two commit markers after the three records.
    assert (tail.log_start, tail.stable_end, tail.log_end) == (0, 5, 5)


def test_the_last_committed_record_is_found_behind_aborted_batches(admin, topic_factory, kafka_node):
    topic = topic_factory("append")
    admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=None, records=_records(1))
    for _ in range(3):  # more aborted offsets than the first look-back window covers
        aborted = begin_transaction(kafka_node.bootstrap, topic, [b"aborted"] * 40)
        aborted.abort_transaction(10)

    tail = _settled_tail(admin, topic)

    assert tail.last.key == b"1" and tail.stable_end > 120


def test_a_writer_left_with_an_open_transaction_is_fenced_and_never_seen(admin, topic_factory, kafka_node):
    topic = topic_factory("append")
    admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=None, records=_records(1))
    # A publisher killed after producing, before committing: its transaction holds the stable end back.
    zombie = begin_transaction(kafka_node.bootstrap, topic, [b"zombie"], transactional_id=f"w-{topic}")

    result = admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=b"1", records=_records(2))

    assert result.appended
    with pytest.raises(KafkaException) as raised:
        zombie.commit_transaction(10)
    assert raised.value.args[0].fatal()
    values = [r.value for r in admin.read_records(topic, 0, start=0, limit=100, end=100, timeout=5,
                                                  isolation="read_committed")]
    assert values == [b"value 1", b"value 2"]


def test_the_isolated_gateway_has_the_same_face(kafka_node, topic_factory):
    topic = topic_factory("append")
    admin = IsolatedKafkaAdmin(ClusterConnection("append-isolated", kafka_node.bootstrap), timeout=5.0)

    result = admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=None, records=_records(7))

    assert result.appended and result.last.key == b"7"
    assert admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=None,
                                records=_records(8)).last.key == b"7"


def test_a_missing_topic_is_named_as_such(admin):
    with pytest.raises(TopicNotFound):
        admin.last_committed_record("no-such-topic-append")


def test_a_transaction_this_writer_cannot_finish_holds_the_append(admin, topic_factory, kafka_node):
    topic = topic_factory("append")
    admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=None, records=_records(1))
    other = begin_transaction(kafka_node.bootstrap, topic, [b"other"], transactional_id=f"other-{topic}")

    held = admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=b"1", records=_records(2))
    other.abort_transaction(10)
    _settled_tail(admin, topic)
    freed = admin.append_if_last(topic, transactional_id=f"w-{topic}", expected_last_key=b"1", records=_records(2))

    assert (held.appended, held.held_at, held.last.key) == (False, 2, b"1")  # after record 1 and its marker
    assert freed.appended and freed.held_at is None
