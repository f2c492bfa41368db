"""The tail's pure parts: sorting EOF events out of a consumed slice, and batches built from records. No broker."""

import pytest
from confluent_kafka import KafkaError, Message

from gateway.kafka.errors import NotAuthorized
from gateway.kafka.records_io.reader import RawRecord, TailBatch, TopicTail
from gateway.kafka.types import ClusterConnection


def record(partition, offset):
    return Message(topic="t", partition=partition, offset=offset, key=b"k%d" % offset, value=b"v%d" % offset)


def event(partition, code=KafkaError._PARTITION_EOF):
    return Message(topic="t", partition=partition, offset=0, error=KafkaError(code))


def tail_at_end(*partitions):
    tail = object.__new__(TopicTail)  # no consumer: _records_only looks only at the slice and at_end
    tail.at_end, tail.timeout = set(partitions), 1.0
    tail.connection = ClusterConnection(name="local", bootstrap_servers="localhost:1")
    return tail


def test_records_keep_their_order_and_each_partition_ends_on_its_last_event():
    tail = tail_at_end(2, 3)  # 2 gets records below; 3 is not in the slice
    got = [record(0, 1), record(1, 7), event(0), record(2, 4), record(1, 8), event(1), record(1, 9), event(5)]

    records = tail._records_only(got)

    assert [(m.partition(), m.offset()) for m in records] == [(0, 1), (1, 7), (2, 4), (1, 8), (1, 9)]
    # 0 and 5 ended on their EOF; 1 had a record after its EOF; 2 got records; 3 is untouched.
    assert tail.at_end == {0, 3, 5}


def test_an_error_other_than_eof_is_raised():
    with pytest.raises(NotAuthorized) as refused:
        tail_at_end()._records_only([record(0, 1), event(0, KafkaError.TOPIC_AUTHORIZATION_FAILED)])
    assert refused.value.code == "TOPIC_AUTHORIZATION_FAILED"
    assert refused.value.message == "Broker: Topic authorization failed"


def test_a_batch_of_records_has_columns_positions_after_each_partition_and_the_records_themselves():
    records = [RawRecord(0, 10, 5, b"a", b"1"), RawRecord(1, 40, 6, b"b", None), RawRecord(0, 11, 7, None, b"3")]

    batch = TailBatch.of(records)

    assert (len(batch), batch.keys, batch.values) == (3, [b"a", b"b", None], [b"1", None, b"3"])
    assert batch.positions == {0: 12, 1: 41}
    assert batch.record(1) == RawRecord(1, 40, 6, b"b", None)
