"""Conditional, transactional appends to one partition: a log that several writers may race to extend, where the
partition itself says how far it got (the audit witness, console/witness/, is the user)."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException, Producer

from gateway.kafka.errors import InvalidRequest
from gateway.kafka.librdkafka.base import AdminBase
from gateway.kafka.librdkafka.client import client_config
from gateway.kafka.librdkafka.mapping import kafka_error_to_exception
from gateway.kafka.records_io import reader
from gateway.kafka.types import EARLIEST, LATEST, STABLE, AppendResult, CommittedTail, PartitionRef, RecordInfo

_FIRST_WINDOW = 64  # offsets read back from the stable end to find the last committed record; grows 8x per miss
# A writer killed inside a transaction holds back read_committed readers until the next writer fences it or this
# runs out; a transaction open for longer than this is one the coordinator does not know (hanging).
TRANSACTION_TIMEOUT_MS = 20_000

MSG_NOT_ACKNOWLEDGED = "{count} record(s) were not acknowledged; the transaction was aborted."


class AppendOps(AdminBase):
    """Composed into KafkaAdmin beside OffsetOps, whose list_offsets_many it uses for the stable end."""

    def last_committed_record(self, topic: str, partition: int = 0) -> CommittedTail:
        """ListOffsets (earliest, latest, and the last stable offset with read_committed), then a read_committed fetch of
        the offsets just below the stable end, widening until a committed record turns up: transaction markers and
        aborted batches take offsets too. DescribeTopics first: raises TopicNotFound for a missing topic."""
        # ListOffsets for a topic that does not exist waits out the timeout for leaders that never come; a
        # Metadata request says so at once.
        self.describe_topics([topic])
        ref = PartitionRef(topic, partition)
        ends = self.list_offsets_many([ref], [EARLIEST, STABLE, LATEST])
        log_start, stable_end, log_end = (ends[at][ref].offset for at in (EARLIEST, STABLE, LATEST))
        window = _FIRST_WINDOW
        while True:
            start = max(log_start, stable_end - window)
            records = reader.read_records(self.connection, topic, partition, start=start, limit=window,
                                          end=stable_end, timeout=self.timeout, isolation="read_committed")
            if records or start == log_start:
                return CommittedTail(log_start=log_start, stable_end=stable_end, log_end=log_end,
                                     last=records[-1] if records else None)
            window *= 8

    def append_if_last(self, topic: str, *, transactional_id: str, expected_last_key: bytes | None,
                       records: tuple[tuple[bytes, bytes], ...], partition: int = 0) -> AppendResult:
        """Writes `records` (key, value) to one partition in one transaction, only if the partition's last
        committed record has the key `expected_last_key` (None: it has no committed record).

        InitProducerId with a fixed transactional.id comes first: it aborts whatever transaction an earlier
        holder of that id left open (a killed writer) and fences that writer, so its late commit fails. The check
        is read after that, and any writer that starts later fences this one before it commits. So two writers
        at once can never both append after the same record: one commits, the other's transaction is aborted
        (ProducerFenced) or it finds a different last record and writes nothing.

        After InitProducerId every transaction the coordinator knows for this id is finished, so a stable end
        still below the log end is a transaction this writer cannot finish: another writer's, or one whose marker
        a broker crash lost while the coordinator recorded it as complete (a hanging transaction). Appending behind
        it would leave the new records unreadable, or tie their fate to it: nothing is written and `held_at` says
        where it starts (abort_transaction ends a hanging one)."""
        delivered: list[tuple[KafkaError | None, object]] = []
        producer = Producer(client_config(self.connection, **{
            "transactional.id": transactional_id, "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
            "message.timeout.ms": min(TRANSACTION_TIMEOUT_MS, int(self.timeout * 1000)), "linger.ms": 5}))
        try:
            producer.init_transactions(self.timeout)
            tail = self.last_committed_record(topic, partition)
            if tail.stable_end < tail.log_end:
                return AppendResult(appended=False, last=tail.last, held_at=tail.stable_end)
            found = tail.last.key if tail.last is not None else None
            if found != expected_last_key or not records:
                return AppendResult(appended=False, last=tail.last)
            producer.begin_transaction()
            for key, value in records:
                producer.produce(topic, key=key, value=value, partition=partition,
                                 on_delivery=lambda error, message: delivered.append((error, message)))
            producer.commit_transaction(self.timeout)
        except KafkaException as exc:
            error = exc.args[0]
            if error.txn_requires_abort():
                try:
                    producer.abort_transaction(self.timeout)
                except KafkaException:
                    pass  # the coordinator aborts it when the next writer starts or the timeout passes
            raise kafka_error_to_exception(error, cluster=self.cluster, timeout=self.timeout) from exc
        failed = [error for error, _ in delivered if error is not None]
        if failed or len(delivered) != len(records):
            # commit_transaction raises before this can happen; a broken promise must not pass as a write.
            raise InvalidRequest(MSG_NOT_ACKNOWLEDGED.format(count=len(failed) or len(records)), cluster=self.cluster)
        message = delivered[-1][1]
        return AppendResult(appended=True, last=RecordInfo(
            topic=topic, partition=partition, offset=message.offset(), timestamp=message.timestamp()[1],
            timestamp_type="create-time", key=message.key(), value=message.value()))
