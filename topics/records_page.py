"""A page of a partition's records, with the gaps a transactional topic leaves in its offsets."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.conf import settings

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.types import EARLIEST, LATEST, STABLE, PartitionRef
from topics.decoding import Decoded, decode_bytes, present


@dataclass(frozen=True)
class RecordRow:
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: Decoded
    value: Decoded
    headers: list[tuple[str, Decoded]]
    size: int
    # "" for a committed (or non-transactional) record; read_uncommitted also shows "aborted" records and
    # "open" ones, written in a transaction that has not ended.
    transaction: str = ""


@dataclass(frozen=True)
class OffsetGap:
    """Offsets with no record to show: transaction markers, and under read_committed aborted records too (or
    records a compacted topic removed)."""

    first: int
    last: int
    isolation: str
    is_gap = True

    @property
    def count(self) -> int:
        return self.last - self.first + 1


def offset_gaps(start: int, offsets: list[int], upto: int, isolation: str) -> list[OffsetGap]:
    """The runs of offsets in [start, upto) missing from `offsets` (ascending)."""
    gaps, expected = [], start
    for offset in [*offsets, upto]:
        if offset > expected:
            gaps.append(OffsetGap(expected, offset - 1, isolation))
        expected = max(expected, offset + 1)
    return gaps


@dataclass(frozen=True)
class RecordsPage:
    topic: str
    partition: int
    start: int
    log_start: int
    log_end: int
    records: list[RecordRow]
    limit: int
    isolation: str = "read_committed"
    last_stable: int | None = None
    gaps: list[OffsetGap] = field(default_factory=list)
    upto: int | None = None  # the exclusive end of the offsets this page covered (records and gaps): the next start

    @property
    def entries(self) -> list:
        """Records and gaps in offset order, for the table."""
        return sorted([*self.records, *self.gaps], key=lambda e: e.offset if isinstance(e, RecordRow) else e.first)

    @property
    def held_back(self) -> int:
        return 0 if self.last_stable is None else max(0, self.log_end - self.last_stable)

    @property
    def range_end(self) -> int:
        """The exclusive end of the offsets this page shows, for its export link."""
        return self.records[-1].offset + 1 if self.records else self.start

    @property
    def export_query(self) -> str:
        """The export's query string for exactly this page's offsets (the export takes the search's fields)."""
        return urlencode({"partitions": self.partition, "start": self.start, "end": self.range_end,
                          "isolation": self.isolation, "max_matches": max(1, self.limit)})

    @property
    def older_offset(self) -> int | None:
        return max(self.log_start, self.start - self.limit) if self.start > self.log_start else None

    @property
    def newer_offset(self) -> int | None:
        last = self.records[-1].offset + 1 if self.records else self.start + self.limit
        return last if last < self.log_end else None


MSG_NO_PARTITION = "Topic '{topic}' has no partition {partition}."


def records_page(cluster: str, topic: str, partition: int, *, offset: int | None = None,
                 timestamp_ms: int | None = None, limit: int = 50, isolation: str = "read_committed",
                 end: int | None = None) -> RecordsPage:
    """A page of records from `offset` (or from the first record at or after `timestamp_ms`, or the last page:
    the last `limit` offsets this isolation can read), read as a read_committed consumer would (the default) or
    read_uncommitted, with aborted records marked. `end` bounds the offsets read (exclusive): the last page
    below it is the page before one that starts there."""
    admin = cluster_admin(cluster)
    described = admin.describe_topics([topic])[topic]
    if partition not in {p.partition for p in described.partitions}:
        raise ConsoleError(MSG_NO_PARTITION.format(topic=topic, partition=partition))
    ref = PartitionRef(topic, partition)
    ats: list = [EARLIEST, LATEST, STABLE] + ([timestamp_ms] if timestamp_ms is not None else [])
    found = admin.list_offsets_many([ref], ats)
    log_start, log_end = found[EARLIEST][ref].offset, found[LATEST][ref].offset
    last_stable = found[STABLE][ref].offset
    upper = log_end if end is None else min(max(end, log_start), log_end)
    committed_end = min(upper, last_stable)  # past it a read_committed reader waits for the transaction
    if timestamp_ms is not None:
        start = found[timestamp_ms][ref].offset
        start = upper if start < 0 else min(start, upper)  # no record at or after that time
    elif offset is None:
        start = max(log_start, (committed_end if isolation == "read_committed" else upper) - limit)
    else:
        start = min(max(offset, log_start), upper)
    timeout = settings.KAFKA_REQUEST_TIMEOUT_S + 2
    committed = admin.read_records(topic, partition, start=start, limit=limit, end=committed_end, timeout=timeout,
                                   isolation="read_committed") if start < committed_end else []
    if isolation == "read_committed":
        records, kinds = committed, {}
        upto = committed[-1].offset + 1 if len(committed) >= limit else max(start, committed_end)
    else:
        records = admin.read_records(topic, partition, start=start, limit=limit, end=upper, timeout=timeout)
        visible = {r.offset for r in committed}
        seen_until = committed[-1].offset + 1 if len(committed) >= limit else committed_end
        kinds = {r.offset: ("open" if r.offset >= last_stable else "aborted") for r in records
                 if r.offset not in visible and (r.offset < seen_until or r.offset >= last_stable)}
        upto = records[-1].offset + 1 if len(records) >= limit else min(upper, start + limit)
    rows = [
        RecordRow(offset=r.offset, timestamp=r.timestamp, timestamp_type=r.timestamp_type,
                  key=present(r.key, r.key_decoded), value=present(r.value, r.value_decoded),
                  headers=[(k, decode_bytes(v)) for k, v in r.headers],
                  size=len(r.key or b"") + len(r.value or b""), transaction=kinds.get(r.offset, ""))
        for r in records
    ]
    gaps = offset_gaps(start, [r.offset for r in rows], max(start, upto), isolation)
    return RecordsPage(topic=topic, partition=partition, start=start, log_start=log_start, log_end=log_end,
                       records=rows, limit=limit, isolation=isolation, last_stable=last_stable, gaps=gaps,
                       upto=max(start, upto))
