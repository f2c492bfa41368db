"""Reads a page of records from one partition without joining a group or committing anything."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from itertools import compress
from typing import NamedTuple

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, TopicPartition

from gateway.kafka.librdkafka.client import client_config
from gateway.kafka.librdkafka.mapping import kafka_error_to_exception
from gateway.kafka.types import ClusterConnection, RecordInfo

_TIMESTAMP_TYPES = {0: "none", 1: "create-time", 2: "log-append-time"}


def read_records(connection: ClusterConnection, topic: str, partition: int, *, start: int, limit: int,
                 end: int, timeout: float, isolation: str = "read_uncommitted") -> list[RecordInfo]:
    """Up to `limit` records of one partition from `start`, below `end`. read_committed skips aborted records and
    transaction markers, so `end` must then be at most the last stable offset, past which it would wait.

    librdkafka insists on a group.id even for assign-only consumers; a throwaway id is never joined or committed
    to, because the consumer only assigns and auto-commit and offset storing are off.
    """
    stop = min(end, start + limit) if isolation == "read_uncommitted" else end
    if stop <= start:
        return []
    consumer = Consumer(client_config(
        connection,
        **{"group.id": f"console-browse-{uuid.uuid4().hex}", "enable.auto.commit": False,
           "enable.auto.offset.store": False, "enable.partition.eof": True, "auto.offset.reset": "earliest",
           "isolation.level": isolation, "fetch.wait.max.ms": 100},
    ))
    records: list[RecordInfo] = []
    deadline = time.monotonic() + timeout
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        while time.monotonic() < deadline:
            batch = consumer.consume(num_messages=min(500, stop - start), timeout=0.5)
            for message in batch:
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        return records
                    raise kafka_error_to_exception(error, cluster=connection.name, timeout=timeout)
                if message.offset() >= stop:
                    return records
                ts_type, ts = message.timestamp()
                records.append(RecordInfo(
                    topic=topic, partition=partition, offset=message.offset(),
                    timestamp=ts if ts_type else None, timestamp_type=_TIMESTAMP_TYPES.get(ts_type, "none"),
                    key=message.key(), value=message.value(), headers=tuple(message.headers() or ()),
                ))
                if message.offset() + 1 >= stop or len(records) >= limit:
                    return records
        return records
    finally:
        consumer.close()


class RawRecord(NamedTuple):
    """One record as the tail read it. A named tuple rather than a frozen dataclass: cheap to build by the
    thousand (a frozen dataclass sets each field through object.__setattr__)."""

    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None


class TailBatch:
    """The records of one TopicTail.poll_batch as columns: keys and values in log order per partition, and the
    position after the batch in each partition read. A backlog reader touches every key and value but hardly
    ever a whole record, so keys and values are pulled out by C loops (map over the client's accessors) instead
    of one Python object per record; record(i) builds the rare whole record on demand."""

    __slots__ = ("keys", "values", "positions", "_record")

    def __init__(self, keys: list[bytes | None], values: list[bytes | None], positions: dict[int, int],
                 record: Callable[[int], RawRecord]) -> None:
        self.keys, self.values, self.positions, self._record = keys, values, positions, record

    @classmethod
    def of(cls, records: list[RawRecord]) -> TailBatch:
        """A batch of records read elsewhere; each partition's position is after its last record."""
        return cls([r.key for r in records], [r.value for r in records],
                   {r.partition: r.offset + 1 for r in records}, records.__getitem__)

    def __len__(self) -> int:
        return len(self.keys)

    def record(self, index: int) -> RawRecord:
        return self._record(index)


def _raw_record(message: Message) -> RawRecord:
    return RawRecord(message.partition(), message.offset(), message.timestamp()[1], message.key(), message.value())


_ERROR, _KEY, _VALUE, _PARTITION = Message.error, Message.key, Message.value, Message.partition
_NO_POSITION = -1001  # librdkafka's OFFSET_INVALID: nothing consumed from that partition yet

# Also the settings of bench/recorder.py's raw consumer, so the two compare like for like. Partition EOF events
# let poll() return the end of a backlog at once instead of waiting out its timeout for records that never come.
TAIL_SETTINGS = {"enable.auto.commit": False, "enable.auto.offset.store": False, "isolation.level": "read_committed",
                 "auto.offset.reset": "earliest", "fetch.wait.max.ms": 200, "enable.partition.eof": True}
_EOF_CHECK_S = 0.02


class TopicTail:
    """Reads a whole topic from given positions with assign() only: no group, no commits; read-committed, so
    aborted transactional offset commits are skipped. Used by the group recorder on `__consumer_offsets`."""

    def __init__(self, connection: ClusterConnection, topic: str, positions: dict[int, int], *, timeout: float) -> None:
        self.connection, self.topic, self.timeout = connection, topic, timeout
        self.consumer = Consumer(client_config(
            connection, **{"group.id": f"console-recorder-{uuid.uuid4().hex}", **TAIL_SETTINGS}))
        self.partitions = self._partitions()
        self.at_end: set[int] = set()  # partitions whose last event was EOF: read to the end as fetched
        self.assigned = {p: positions.get(p, 0) for p in self.partitions}
        self._positions = [TopicPartition(topic, p) for p in self.partitions]
        self.consumer.assign([TopicPartition(topic, p, positions.get(p, OFFSET_BEGINNING)) for p in self.partitions])

    def _partitions(self) -> list[int]:
        try:
            metadata = self.consumer.list_topics(self.topic, timeout=self.timeout)
        except KafkaException as exc:
            raise kafka_error_to_exception(exc.args[0], cluster=self.connection.name, timeout=self.timeout) from exc
        topic = metadata.topics.get(self.topic)
        if topic is None or topic.error is not None:
            error = topic.error if topic is not None else KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART)
            raise kafka_error_to_exception(error, cluster=self.connection.name, timeout=self.timeout)
        return sorted(topic.partitions)

    def end_offsets(self) -> dict[int, int]:
        """High watermarks as the last fetch responses reported them; a partition not fetched yet is asked for.
        Asking for every partition queues each request behind the consumer's long-polling fetch (~200 ms each)."""
        ends = {}
        for p in self.partitions:
            tp = TopicPartition(self.topic, p)
            _, high = self.consumer.get_watermark_offsets(tp, cached=True)
            if high < 0:
                _, high = self.consumer.get_watermark_offsets(tp, timeout=self.timeout)
            ends[p] = high
        return ends

    def behind(self) -> int:
        """Offsets between the read position and the end, summed over the partitions; 0 when every partition was
        read to its end (the consumer's position skips transaction markers)."""
        ends = self.end_offsets()
        positions = self.consumer.position([TopicPartition(self.topic, p) for p in self.partitions])
        # Before its first fetch a partition has no position (-1001): it is still where it was assigned.
        return sum(max(0, ends[tp.partition] - (tp.offset if tp.offset >= 0 else self.assigned[tp.partition]))
                   for tp in positions)

    def caught_up(self) -> bool:
        return self.behind() == 0

    def poll(self, max_records: int, timeout: float) -> list[RawRecord]:
        """poll_batch's records, each whole."""
        batch = self.poll_batch(max_records, timeout)
        return [batch.record(i) for i in range(len(batch))]

    def poll_batch(self, max_records: int, timeout: float) -> TailBatch:
        """Up to `max_records` records, waiting at most `timeout`; returns early once something was read and every
        partition is at its end. consume() itself would wait out its timeout for the last few records of a backlog,
        so it is asked in short slices between which the EOF events are looked at."""
        messages: list[Message] = []
        deadline = time.monotonic() + timeout
        at_end, everything = self.at_end, len(self.partitions)
        while True:
            wait = max(0.0, min(_EOF_CHECK_S, deadline - time.monotonic()))
            got = self.consumer.consume(num_messages=max_records - len(messages), timeout=wait)
            if got:
                # Truth only (an error is truthy, None not): KafkaError's == against None raises inside the client.
                if any(map(_ERROR, got)):  # EOF events (or an error) among the records: sorted out in order
                    got = self._records_only(got)
                elif at_end:
                    at_end.difference_update(map(_PARTITION, got))
                messages += got
            if len(messages) >= max_records or time.monotonic() >= deadline or (messages and len(at_end) == everything):
                break
        # The consumer's position is just past the last record it handed over (and past transaction markers), so
        # one call gives every partition's next offset instead of an offset read from every record.
        positions = {tp.partition: tp.offset for tp in self.consumer.position(self._positions)
                     if tp.offset != _NO_POSITION} if messages else {}
        return TailBatch(list(map(_KEY, messages)), list(map(_VALUE, messages)), positions,
                         lambda index: _raw_record(messages[index]))

    def _records_only(self, got: list[Message]) -> list[Message]:
        """The records of a slice holding events, which are few (an EOF per partition at most) among up to a batch of
        records: found and removed with C loops, the records left as they are. A partition is at its end when its
        last event here is its EOF; one with a record after it (or records and no EOF) is not."""
        errors = list(map(_ERROR, got))
        partitions = list(map(_PARTITION, got))
        last = dict(zip(partitions, range(len(got))))  # each partition's last event here
        events = list(compress(range(len(got)), errors))
        self.at_end.difference_update(last)
        for index in events:
            error = errors[index]
            if error.code() != KafkaError._PARTITION_EOF:
                raise kafka_error_to_exception(error, cluster=self.connection.name, timeout=self.timeout)
            if last[partitions[index]] == index:
                self.at_end.add(partitions[index])
        for index in reversed(events):
            del got[index]
        return got

    def close(self) -> None:
        self.consumer.close()
