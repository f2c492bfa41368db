"""Import of a JSON-lines, CSV or Avro file into a topic: a preview (the first records and the partitions they will go
to, every bad line by number), then the write, in batches through an idempotent producer at a bounded rate,
audited with the counts. A bad line stops the import there (the lines before it are written, none after it)
unless the person asked to skip bad lines; either way every bad line is reported by its number."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from console.audit.actor import Actor
from console.audit.services import audited
from console.witness.guard import witness_topic_guard
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import OutgoingRecord
from records.conf import import_max_rate
from records.import_parse import (
    KINDS, BadLine, ImportLine, LineRefused, parse_file, partition_for, payload_bytes, payload_text,
)
from records.record_size import record_batch_bytes

IMPORT_ACTION = "records.import"
BATCH = 5_000
KEEP_BAD = 1_000  # bad lines listed at most (all are counted)
MSG_RATE = "The rate is between 1 and {limit} records per second."
MSG_FORMAT = "An import reads jsonl, csv or avro, not '{kind}'."
MSG_NO_SUCH_PARTITION = "partition {partition} does not exist (the topic has {count})"
MSG_BATCH_FAILED = "Kafka did not acknowledge every record after {written} were written: {error}"
MSG_TOO_LARGE = ("the record takes {size} bytes on the broker, over {topic}'s max.message.bytes of {limit}: "
                 "it would be refused, and is not cut to fit")
MAX_MESSAGE_BYTES = "max.message.bytes"


@dataclass(frozen=True)
class PreviewRow:
    line: int
    key: str | None
    value: str | None
    headers: tuple[tuple[str, str | None], ...]  # as text (bytes that are not UTF-8 as hex)
    partition: int | None  # where it goes; None: a null key without a partition, spread by the producer
    timestamp: int | None


@dataclass
class ImportReport:
    records: int = 0  # good records (a preview) or records written (an import)
    bad: list[BadLine] = field(default_factory=list)
    bad_count: int = 0
    first: list[PreviewRow] = field(default_factory=list)
    partitions: dict[int, int] = field(default_factory=dict)
    stopped_at: int | None = None  # the bad line an import stopped at
    seconds: float = 0.0

    def add_bad(self, bad: BadLine) -> None:
        self.bad_count += 1
        if len(self.bad) < KEEP_BAD:
            self.bad.append(bad)

    def as_json(self) -> dict:
        return {"records": self.records, "bad_lines": [{"line": b.line, "reason": b.reason} for b in self.bad],
                "bad_count": self.bad_count, "partitions": {str(p): n for p, n in sorted(self.partitions.items())},
                "stopped_at_line": self.stopped_at, "seconds": round(self.seconds, 3)}


class _Encoder:
    """Turns a file's record into what is written: bytes as they are, text as UTF-8, or JSON through a registry
    subject; checks the partition and the size the topic accepts. `keep_partitions`/`keep_timestamps` off: the
    file's partitions (then the key's hash chooses) or timestamps (then the producer's time) are left aside."""

    def __init__(self, cluster: str, topic: str, key_subject: str, value_subject: str, *,
                 keep_partitions: bool = True, keep_timestamps: bool = True) -> None:
        self.admin = cluster_admin(cluster)
        self.topic, self.key_subject, self.value_subject = topic, key_subject.strip(), value_subject.strip()
        self.keep_partitions, self.keep_timestamps = keep_partitions, keep_timestamps
        self.partition_count = self.admin.describe_topics([topic])[topic].partition_count
        entry = self.admin.describe_configs("topic", [topic])[topic].get(MAX_MESSAGE_BYTES)
        self.max_bytes = int(entry.value) if entry is not None and (entry.value or "").isdigit() else None

    def _bytes(self, value: object, subject: str, *, is_key: bool) -> bytes | None:
        if value is None or isinstance(value, bytes) or not subject:
            return payload_bytes(value)  # exact bytes are written as they are, subject or not
        return self.admin.registry_encode(self.topic, payload_text(value), subject=subject, is_key=is_key)[0]

    def record(self, line: ImportLine) -> OutgoingRecord | BadLine:
        partition = line.partition if self.keep_partitions else None
        if partition is not None and partition >= self.partition_count:
            return BadLine(line.line, MSG_NO_SUCH_PARTITION.format(partition=partition, count=self.partition_count))
        try:
            key = self._bytes(line.key, self.key_subject, is_key=True)
            value = self._bytes(line.value, self.value_subject, is_key=False)
            headers = tuple((name, payload_bytes(data)) for name, data in line.headers)
        except LineRefused as exc:
            return BadLine(line.line, str(exc))
        except (ConsoleError, KafkaGatewayError) as exc:
            return BadLine(line.line, exc.message)
        size = record_batch_bytes(key, value, headers)
        if self.max_bytes is not None and size > self.max_bytes:
            return BadLine(line.line, MSG_TOO_LARGE.format(size=size, topic=self.topic, limit=self.max_bytes))
        return OutgoingRecord(key=key, value=value, headers=headers, partition=partition,
                              timestamp=line.timestamp if self.keep_timestamps else None)

    def target(self, record: OutgoingRecord) -> int | None:
        return record.partition if record.partition is not None else partition_for(record.key, self.partition_count)


def check_import(kind: str, rate: int | None = None) -> None:
    if kind not in KINDS:
        raise ConsoleError(MSG_FORMAT.format(kind=kind))
    if rate is not None and not 1 <= rate <= import_max_rate():
        raise ConsoleError(MSG_RATE.format(limit=import_max_rate()))


def import_preview(*, cluster: str, topic: str, kind: str, source: BinaryIO, key_subject: str = "",
                   value_subject: str = "", keep_partitions: bool = True, keep_timestamps: bool = True,
                   show: int = 10) -> ImportReport:
    """Reads the whole file (`source`, opened in binary) without writing: the first `show` records as they will
    be written and where, the number of good records, and every bad line (encoded with the subjects and sized
    against the topic's limit, so a record the schema or the broker would refuse is a bad line here too)."""
    check_import(kind)
    encoder = _Encoder(cluster, topic, key_subject, value_subject, keep_partitions=keep_partitions,
                       keep_timestamps=keep_timestamps)
    report = ImportReport()
    started = time.monotonic()
    for item in parse_file(kind, source):
        outgoing = item if isinstance(item, BadLine) else encoder.record(item)
        if isinstance(outgoing, BadLine):
            report.add_bad(outgoing)
            continue
        report.records += 1
        if len(report.first) < show:
            report.first.append(PreviewRow(
                line=item.line, key=payload_text(outgoing.key), value=payload_text(outgoing.value),
                headers=tuple((name, payload_text(data)) for name, data in outgoing.headers),
                partition=encoder.target(outgoing), timestamp=outgoing.timestamp))
    report.seconds = time.monotonic() - started
    return report


def records_import(*, actor: Actor, cluster: str, topic: str, kind: str, source: BinaryIO, rate: int,
                   key_subject: str = "", value_subject: str = "", skip_bad: bool = False,
                   keep_partitions: bool = True, keep_timestamps: bool = True, reason: str = "",
                   file_name: str = "", progress: Callable[[ImportReport], None] | None = None,
                   on_audit: Callable[[uuid.UUID], None] | None = None) -> ImportReport:
    """Writes the records of `source` (a file opened in binary) in order, BATCH at a time through one idempotent
    producer, no faster than `rate` records per second: each record's bytes as the file gives them, in the
    file's partition and with its timestamp unless told otherwise. The audit outcome holds the count written per
    partition and the bad lines; a failure of Kafka ends it as a failure with the count written so far.
    `on_audit` is told the audit's correlation id before the first record is written; `progress` is told the
    report after every batch (and may stop the import by raising a ConsoleError, which ends it as a failure with
    that message)."""
    check_import(kind, rate)
    params = {"format": kind, "source": file_name, "rate": rate, "skip_bad": skip_bad,
              "keep_partitions": keep_partitions, "keep_timestamps": keep_timestamps,
              "subjects": {"key": key_subject.strip(), "value": value_subject.strip()}}
    witness_topic_guard(actor=actor, action=IMPORT_ACTION, cluster=cluster, topic=topic, what="import into",
                        reason=reason, params=params)
    encoder = _Encoder(cluster, topic, key_subject, value_subject, keep_partitions=keep_partitions,
                       keep_timestamps=keep_timestamps)
    report = ImportReport()
    session = f"import-{uuid.uuid4().hex}"
    batch_size = max(1, min(BATCH, rate))
    started = time.monotonic()
    with audited(actor=actor, action=IMPORT_ACTION, cluster=cluster, target=f"topic:{topic}", reason=reason,
                 params=params) as audit:
        if on_audit is not None:
            on_audit(audit.intent.correlation_id)
        batch: list[OutgoingRecord] = []

        def send() -> None:
            # Paced before each batch: `records` written so far may not get ahead of rate × elapsed.
            ahead = report.records / rate - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)
            done = encoder.admin.produce_batch(topic, tuple(batch), session=session, max_batch_bytes=encoder.max_bytes)
            report.records += done.written
            for partition, count in done.partitions:
                report.partitions[partition] = report.partitions.get(partition, 0) + count
            batch.clear()
            report.seconds = time.monotonic() - started
            audit.after = report.as_json()
            if done.error:
                raise ConsoleError(MSG_BATCH_FAILED.format(written=report.records, error=done.error))
            if progress is not None:
                progress(report)

        try:
            for item in parse_file(kind, source):
                outgoing = item if isinstance(item, BadLine) else encoder.record(item)
                if isinstance(outgoing, BadLine):
                    report.add_bad(outgoing)
                    if not skip_bad:
                        report.stopped_at = outgoing.line
                        break
                    continue
                batch.append(outgoing)
                if len(batch) >= batch_size:
                    send()
            if batch:
                send()
        finally:
            encoder.admin.produce_close(session)
        report.seconds = time.monotonic() - started
        audit.after = report.as_json()
    return report
