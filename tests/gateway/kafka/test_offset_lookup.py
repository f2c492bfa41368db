"""Offsets of many partitions looked up by a consumer (gateway/kafka/librdkafka/offset_lookup.py) are the ones the
Admin client's ListOffsets gives for the same broker state: log start, log end and the last stable offset behind
an open transaction; a topic deleted meanwhile is left out or named, as before."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.errors import PartitionErrors
from gateway.kafka.librdkafka import offset_lookup
from gateway.kafka.types import EARLIEST, LATEST, STABLE, ClusterConnection, PartitionRef
from tests.fixtures.kafka import begin_transaction

pytestmark = pytest.mark.kafka

TOPICS, PARTITIONS = 3, 4


@pytest.fixture
def gateway(kafka_node, monkeypatch):
    # A handful of partitions stands for a big cluster's thousands: the lookup takes every call, in small windows.
    monkeypatch.setattr(offset_lookup, "LOOKUP_MIN_PARTITIONS", 1)
    monkeypatch.setattr(offset_lookup, "LOOKUP_WINDOW", 5)
    return KafkaAdmin(ClusterConnection("lookup", kafka_node.bootstrap), timeout=10)


def _by_admin_client(gateway, refs, ats, monkeypatch):
    monkeypatch.setattr(offset_lookup, "LOOKUP_MIN_PARTITIONS", 10 ** 9)
    try:
        return gateway.list_offsets_many(refs, ats)
    finally:
        monkeypatch.setattr(offset_lookup, "LOOKUP_MIN_PARTITIONS", 1)


def test_lookup_gives_what_list_offsets_gives(gateway, kafka_node, topic_factory, produce, outsider, monkeypatch):
    topics = [topic_factory("lookup", partitions=PARTITIONS) for _ in range(TOPICS)]
    for i, topic in enumerate(topics):
        produce(topic, [(p, None, b"v", None) for p in range(PARTITIONS) for _ in range(i + p + 1)])
    # A log start past zero, and a transaction left open on one partition: stable stops before the log end.
    outsider.delete_records([TopicPartition(topics[2], 3, 2)])[TopicPartition(topics[2], 3, 2)].result(10)
    producer = begin_transaction(kafka_node.bootstrap, topics[1], [b"open", b"open"])
    try:
        refs = [PartitionRef(t, p) for t in topics for p in range(PARTITIONS)]
        looked_up = gateway.list_offsets_many(refs, [EARLIEST, LATEST, STABLE])
        expected = _by_admin_client(gateway, refs, [EARLIEST, LATEST, STABLE], monkeypatch)
    finally:
        producer.abort_transaction(15)
    assert looked_up == expected
    assert looked_up[EARLIEST][PartitionRef(topics[2], 3)].offset == 2
    assert looked_up[LATEST][PartitionRef(topics[2], 3)].offset == 2 + 3 + 1
    open_partition = PartitionRef(topics[1], 0)
    assert looked_up[STABLE][open_partition].offset == 2  # the two committed records; the open ones follow
    assert looked_up[LATEST][open_partition].offset == 4


def test_a_deleted_topic_is_left_out_or_named(gateway, topic_factory, produce, outsider):
    kept, gone = topic_factory("lookup-kept", partitions=2), topic_factory("lookup-gone", partitions=2)
    produce(kept, [(0, None, b"v", None)])
    outsider.delete_topics([gone])[gone].result(10)
    refs = [PartitionRef(t, p) for t in (kept, gone) for p in range(2)]
    found = gateway.list_offsets_many(refs, [LATEST], strict=False)[LATEST]
    assert {ref: at.offset for ref, at in found.items()} == {PartitionRef(kept, 0): 1, PartitionRef(kept, 1): 0}
    with pytest.raises(PartitionErrors) as raised:
        gateway.list_offsets_many(refs, [LATEST])
    assert {(e.topic, e.partition) for e in raised.value.errors} == {(gone, 0), (gone, 1)}


def test_a_window_failing_as_a_whole_is_asked_through_the_admin_client(gateway, topic_factory, produce,
                                                                          monkeypatch):
    topic = topic_factory("lookup-retry", partitions=3)
    produce(topic, [(p, None, b"v", None) for p in range(3)])
    windows = []

    class Failing:  # what offsets_for_times does when a leader moves under one window: the whole call fails
        def offsets_for_times(self, partitions, **_kwargs):
            windows.append(len(partitions))
            raise KafkaException(KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION))

        def consume(self, *_args):
            return []

    monkeypatch.setattr(offset_lookup, "lookup_consumer", lambda *_args: Failing())
    found = gateway.list_offsets_many([PartitionRef(topic, p) for p in range(3)], [LATEST])[LATEST]
    assert windows == [3]
    assert {ref.partition: at.offset for ref, at in found.items()} == {0: 1, 1: 1, 2: 1}


def test_a_lookup_that_times_out_hands_the_rest_of_the_call_to_the_admin_client(gateway, topic_factory, produce,
                                                                                 monkeypatch):
    topic = topic_factory("lookup-stalled", partitions=12)
    produce(topic, [(p, None, b"v", None) for p in range(12) for _ in range(p)])
    asked = []

    class Silent:  # a leader that does not answer within the window's share of the bound
        def offsets_for_times(self, partitions, **_kwargs):
            asked.append(len(partitions))
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT))

        def consume(self, *_args):
            return []

    monkeypatch.setattr(offset_lookup, "lookup_consumer", lambda *_args: Silent())
    found = gateway.list_offsets_many([PartitionRef(topic, p) for p in range(12)], [EARLIEST, LATEST, STABLE])
    # The first window of each kind, asked at once: no kind waits a second time on the same silent leader.
    assert asked == [5, 5, 5]
    assert {ref.partition: at.offset for ref, at in found[LATEST].items()} == {p: p for p in range(12)}
    assert found[STABLE] == found[LATEST]
    assert {at.offset for at in found[EARLIEST].values()} == {0}


def test_partitions_the_lookup_failed_are_asked_through_the_admin_client(gateway, topic_factory, produce,
                                                                         monkeypatch):
    """The lookup consumer answers from its own metadata cache (a topic deleted and created again since, say, can
    fail there): a partition it fails is not reported failed but asked again where leaders are looked up afresh."""
    topic = topic_factory("lookup-partly", partitions=4)
    produce(topic, [(p, None, b"v", None) for p in range(4) for _ in range(p + 1)])

    class Stale:
        def offsets_for_times(self, partitions, **_kwargs):
            # Odd partitions fail; even ones answer an offset told apart from the Admin client's answers below.
            return [SimpleNamespace(topic=tp.topic, partition=tp.partition, offset=100 + tp.partition, error=None)
                    if tp.partition % 2 == 0 else
                    SimpleNamespace(topic=tp.topic, partition=tp.partition, offset=-1,
                                    error=KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART))
                    for tp in partitions]

        def consume(self, *_args):
            return []

    monkeypatch.setattr(offset_lookup, "lookup_consumer", lambda *_args: Stale())
    found = gateway.list_offsets_many([PartitionRef(topic, p) for p in range(4)], [LATEST])[LATEST]
    assert {ref.partition: at.offset for ref, at in found.items()} == {0: 100, 1: 2, 2: 102, 3: 4}


def test_the_kinds_are_looked_up_at_once(gateway, topic_factory, monkeypatch):
    """Log ends and last stable offsets are waited for together, not one kind after the other."""
    topic = topic_factory("lookup-together", partitions=2)
    barrier = threading.Barrier(2, timeout=5)
    met = []

    class Together:  # each kind's first window waits for the other kind's to have started
        def offsets_for_times(self, partitions, **_kwargs):
            try:
                barrier.wait()
                met.append(True)
            except threading.BrokenBarrierError:
                met.append(False)
            return [SimpleNamespace(topic=tp.topic, partition=tp.partition, offset=7, error=None) for tp in partitions]

        def consume(self, *_args):
            return []

    monkeypatch.setattr(offset_lookup, "lookup_consumer", lambda *_args: Together())
    found = gateway.list_offsets_many([PartitionRef(topic, p) for p in range(2)], [LATEST, STABLE])
    assert met == [True, True]
    assert {at: {ref.partition: o.offset for ref, o in kind.items()} for at, kind in found.items()} == {
        LATEST: {0: 7, 1: 7}, STABLE: {0: 7, 1: 7}}
