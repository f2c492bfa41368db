"""Records: read, searched, produced, appended, and decoded through the schema registry."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecordInfo:
    topic: str
    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    # Through the cluster's schema registry, when it has one and the bytes are in its wire format.
    key_decoded: DecodedPart | None = None
    value_decoded: DecodedPart | None = None


@dataclass(frozen=True)
class SchemaInfo:
    """A registered schema as a record refers to it: id, type (AVRO, PROTOBUF, JSON), subject and version."""

    schema_id: int
    schema_type: str
    subject: str
    version: int | None
    text: str


@dataclass(frozen=True)
class SubjectInfo:
    subject: str
    latest_version: int
    schema_id: int
    schema_type: str


@dataclass(frozen=True)
class DecodedPart:
    """A key or value decoded through the schema registry. `value` holds what JSON can (None for kind "hex");
    `error` says why a record in the registry's wire format could not be decoded."""

    kind: str  # avro, protobuf, json-schema, or hex
    value: object
    schema: SchemaInfo | None = None
    error: str = ""


@dataclass(frozen=True)
class ScanFilter:
    """What a search keeps. Text filters look at the decoded JSON of registry records, else at the raw bytes;
    field equalities (dotted paths) and the JSONPath look at the decoded value (registry or plain JSON)."""

    key_contains: str = ""
    key_regex: str = ""
    value_contains: str = ""
    value_regex: str = ""
    value_fields: tuple[tuple[str, str], ...] = ()
    value_jsonpath: str = ""
    header_name: str = ""
    header_contains: str = ""
    ts_from_ms: int | None = None
    ts_to_ms: int | None = None


@dataclass(frozen=True)
class ScanCursor:
    """One partition of a scan over [low, high): `next` is the next offset to read going forwards, or the
    exclusive top of what is left going backwards (newest first)."""

    partition: int
    low: int
    high: int
    next: int

    @property
    def total(self) -> int:
        return max(0, self.high - self.low)


@dataclass(frozen=True)
class ScanRequest:
    scan_id: str
    topic: str
    cursors: tuple[ScanCursor, ...]
    filter: ScanFilter = ScanFilter()
    newest_first: bool = False
    isolation: str = "read_committed"
    max_seconds: float = 1.0
    max_records: int = 10_000_000
    max_matches: int = 500


@dataclass(frozen=True)
class ScanMatch:
    record: RecordInfo
    key: DecodedPart | None = None
    value: DecodedPart | None = None


@dataclass(frozen=True)
class ScanChunk:
    cursors: tuple[ScanCursor, ...]
    matches: tuple[ScanMatch, ...]
    scanned: int
    done: bool


@dataclass(frozen=True)
class OutgoingRecord:
    """One record of a batch to write; partition None lets the key's hash choose, timestamp None the producer."""

    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    partition: int | None = None
    timestamp: int | None = None


@dataclass(frozen=True)
class BatchWritten:
    """What a batch write did: records acknowledged per partition, in order; the first failure's reason, if any
    (records after a failed one may still have been written: their count is in `written`)."""

    written: int
    partitions: tuple[tuple[int, int], ...]  # (partition, records written to it)
    error: str = ""


@dataclass(frozen=True)
class ProducedRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int


@dataclass(frozen=True)
class CommittedTail:
    """Where a partition stands for a read_committed reader: its log start, its last stable offset (the end such
    a reader sees; below `log_end` while a transaction is open), its log end, and the last committed record below
    the stable end (None when there is none)."""

    log_start: int
    stable_end: int
    log_end: int
    last: RecordInfo | None


@dataclass(frozen=True)
class AppendResult:
    """What a conditional append did: `appended` False means nothing was written, because the partition's last
    committed record was not the one expected, or because `held_at` is set: a transaction this writer did not start
    (another writer's, or one the coordinator lost track of in a broker crash) holds the stable end at that
    offset. `last` is the partition's last committed record afterwards."""

    appended: bool
    last: RecordInfo | None
    held_at: int | None = None
