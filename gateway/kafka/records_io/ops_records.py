"""Records: read a page, search in chunks, produce one; and the schema registry that decodes and encodes them."""

from __future__ import annotations

from dataclasses import replace

from confluent_kafka import KafkaError, KafkaException, Producer

from gateway.kafka.errors import InvalidRequest
from gateway.kafka.librdkafka.base import AdminBase
from gateway.kafka.librdkafka.client import client_config
from gateway.kafka.librdkafka.mapping import kafka_error_to_exception
from gateway.kafka.records_io import reader, scanner
from gateway.kafka.records_io.producers import batch_producers
from gateway.kafka.types import (
    BatchWritten, DecodedPart, OutgoingRecord, ProducedRecord, RecordInfo, ScanChunk, ScanRequest, SchemaInfo,
    SubjectInfo,
)

MSG_NOT_WRITTEN = "The record was not acknowledged within {timeout:g} s; it may or may not have been written."


def _codec(ops: AdminBase):
    # The serializers' imports (fastavro, protobuf, httpx) cost half a second: only clusters with a registry pay.
    from gateway.kafka.schema_registry import registry_codec

    return registry_codec(ops.connection, timeout=ops.timeout)


class RecordOps(AdminBase):
    def read_records(self, topic: str, partition: int, *, start: int, limit: int, end: int,
                     timeout: float, isolation: str = "read_uncommitted") -> list[RecordInfo]:
        """Fetch with an assign-only consumer: up to `limit` records of one partition in [start, end); keys and
        values in the schema registry's wire format come decoded when the cluster has a registry."""
        records = reader.read_records(self.connection, topic, partition, start=start, limit=limit, end=end,
                                      timeout=timeout, isolation=isolation)
        if not self.connection.registry_url:
            return records
        codec = _codec(self)
        return [replace(r, key_decoded=codec.decode(topic, r.key, is_key=True),
                        value_decoded=codec.decode(topic, r.value)) for r in records]

    def produce_batch(self, topic: str, records: tuple[OutgoingRecord, ...], *, session: str = "",
                      max_batch_bytes: int | None = None) -> BatchWritten:
        """Writes a batch with an idempotent producer (acks=all: a retry inside librdkafka never duplicates or
        reorders a record of a partition) and waits for every acknowledgement. Batches of one `session` (an
        import) share one producer, kept in this process between calls, so a file is one producer's writes and
        pays for its connection and producer id once. A keyed record without a partition goes where the Java
        producer would put it (murmur2). `max_batch_bytes`: the topic's max.message.bytes, which librdkafka's
        batches must not pass (the broker refuses a whole batch over it, and librdkafka does not split one),
        and up to which one record may go. Raises only for what stops the whole batch."""
        delivered: list = []
        producer = batch_producers.get(self.connection, session, timeout=self.timeout, max_batch_bytes=max_batch_bytes)

        def on_delivery(error: KafkaError | None, message) -> None:
            delivered.append((error, None if error is not None else message.partition()))

        try:
            for record in records:
                kwargs = {"key": record.key, "value": record.value, "headers": list(record.headers) or None,
                          "on_delivery": on_delivery}
                if record.partition is not None:
                    kwargs["partition"] = record.partition
                if record.timestamp is not None:
                    kwargs["timestamp"] = record.timestamp
                while True:
                    try:
                        producer.produce(topic, **kwargs)
                        break
                    except BufferError:
                        producer.poll(0.05)
            producer.flush(self.timeout + 1)
        except KafkaException as exc:
            batch_producers.close(session)
            raise kafka_error_to_exception(exc.args[0], cluster=self.cluster, timeout=self.timeout) from exc
        counts: dict[int, int] = {}
        errors = [error for error, _ in delivered if error is not None]
        for error, partition in delivered:
            if error is None:
                counts[partition] = counts.get(partition, 0) + 1
        reason = errors[0].str() if errors else ("" if len(delivered) == len(records) else
                                                  MSG_NOT_WRITTEN.format(timeout=self.timeout))
        if reason or not session:
            batch_producers.close(session)
        return BatchWritten(written=sum(counts.values()), partitions=tuple(sorted(counts.items())), error=reason)

    def produce_close(self, session: str) -> None:
        """Ends a session's producer (an import that is done or stopped)."""
        batch_producers.close(session)

    def scan_chunk(self, request: ScanRequest) -> ScanChunk:
        """One bounded stretch of a topic search (gateway.kafka.records_io.scanner)."""
        return scanner.scan_chunk(self.connection, request, timeout=self.timeout)

    def scan_close(self, scan_id: str) -> None:
        scanner.close_scan(scan_id)

    def produce_record(self, topic: str, *, partition: int | None, key: bytes | None, value: bytes | None,
                       headers: tuple[tuple[str, bytes], ...] = ()) -> ProducedRecord:
        """Writes one record (acks=all, idempotent) and waits for its offset; partition None hashes the key as
        Kafka's clients do (murmur2, like the Java producer)."""
        delivered: list = []
        producer = Producer(client_config(self.connection, **{
            "acks": "all", "enable.idempotence": True, "partitioner": "murmur2_random",
            "message.timeout.ms": int(self.timeout * 1000), "linger.ms": 0}))

        def on_delivery(error: KafkaError | None, message) -> None:
            delivered.append((error, message))

        try:
            kwargs = {"key": key, "value": value, "headers": list(headers), "on_delivery": on_delivery}
            if partition is not None:
                kwargs["partition"] = partition
            producer.produce(topic, **kwargs)
        except (KafkaException, BufferError, ValueError, TypeError) as exc:
            error = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
            if error is not None:
                raise kafka_error_to_exception(error, cluster=self.cluster, timeout=self.timeout) from exc
            raise InvalidRequest(str(exc), cluster=self.cluster) from exc
        producer.flush(self.timeout + 1)
        if not delivered:
            raise InvalidRequest(MSG_NOT_WRITTEN.format(timeout=self.timeout), cluster=self.cluster,
                                 code="_MSG_TIMED_OUT")
        error, message = delivered[0]
        if error is not None:
            raise kafka_error_to_exception(error, cluster=self.cluster, timeout=self.timeout)
        return ProducedRecord(topic=topic, partition=message.partition(), offset=message.offset(),
                              timestamp=message.timestamp()[1])

    # -- schema registry ------------------------------------------------------------------------------------

    def registry_subjects(self) -> list[SubjectInfo]:
        return _codec(self).subjects()

    def registry_versions(self, subject: str) -> list[int]:
        return _codec(self).versions(subject)

    def registry_schema(self, subject: str, version: int | None = None) -> SchemaInfo:
        return _codec(self).schema(subject, version)

    def registry_schema_by_id(self, schema_id: int) -> SchemaInfo:
        return _codec(self).schema_by_id(schema_id)

    def registry_decode(self, topic: str, data: bytes | None, *, is_key: bool = False) -> DecodedPart | None:
        return _codec(self).decode(topic, data, is_key=is_key)

    def registry_encode(self, topic: str, value_json: str, *, subject: str, version: int | None = None,
                        is_key: bool = False) -> tuple[bytes, SchemaInfo]:
        return _codec(self).encode(
            topic, value_json, subject=subject, version=version, is_key=is_key)
