"""The message browser's reads: one list of a topic's records, newest first across its partitions unless asked
otherwise, a page at a time with a cursor per partition (so the next page reads on from where this one stopped,
never from the start), and the records that arrived above the newest one shown (the live tail).

Two readers, both existing ones: a single partition without filters goes through topics' records_page, which shows
the offsets transaction markers and aborted records take; everything else is a step of the topic search
(records/search.py over the gateway's scanner), whose newest-first windows merge the partitions by time. No consumer
group, nothing committed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from urllib.parse import urlencode

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.types import ScanCursor, ScanFilter, ScanMatch
from records.search import Bound, SearchSpec, search_begin, search_step
from records.selectors import decoded_matches
from topics.decoding import Decoded, decode_bytes, present
from topics.records_page import RecordsPage, records_page

STARTS = {"newest": "Newest first", "oldest": "Oldest first", "offset": "From offset", "time": "From time"}
STEP_S = 2.0  # a filtered page scans this long at most; what it has not reached, "load more" goes on with
TAIL_MAX = 200  # records one poll of the live tail brings at most; the next poll brings the rest
MAX_CURSOR_CHARS = 200_000
_CURSOR = re.compile(r"\d{1,9}:\d{1,19}(,\d{1,9}:\d{1,19})*", re.ASCII)
MSG_BAD_CURSOR = "This page's position was not recognised: it is partition:offset pairs, e.g. 0:120,1:98."


@dataclass(frozen=True)
class BrowseQuery:
    """What the browser shows: where it starts, which partition (None: all), the filters, how it reads."""

    start: str = "newest"
    partition: int | None = None
    offset: int | None = None
    time_ms: int | None = None
    key: str = ""
    value: str = ""
    isolation: str = "read_committed"
    limit: int = 50

    @property
    def newest_first(self) -> bool:
        return self.start == "newest"

    @property
    def filter(self) -> ScanFilter:
        return ScanFilter(key_contains=self.key, value_contains=self.value)

    @property
    def one_partition_as_is(self) -> bool:
        """One partition with no filter: read offset by offset, showing what takes offsets without a record."""
        return self.partition is not None and not (self.key or self.value)


@dataclass(frozen=True)
class BrowseRow:
    """One record of the list; `key`, `value` and `headers` as masking.apply expects them."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: Decoded
    value: Decoded
    headers: list[tuple[str, Decoded]]
    size: int
    transaction: str = ""  # "", "aborted" or "open" (read_uncommitted on one partition)
    is_gap = False

    @property
    def anchor(self) -> str:
        return f"r-{self.partition}-{self.offset}"


@dataclass(frozen=True)
class BrowsePage:
    query: BrowseQuery
    entries: list  # BrowseRow and topics' OffsetGap, in the order shown
    cursor: dict[int, int]  # where the next page goes on, per partition
    more: bool  # records are left in the direction of reading (older ones newest first, newer ones otherwise)
    partitions: tuple[int, ...]
    range_total: int  # offsets in the range read (transaction markers count)
    scanned: int = 0  # records a filtered page looked at
    tops: dict[int, int] = field(default_factory=dict)  # where the live tail starts (newest first, first page)
    held_back: int = 0
    last_stable: int | None = None
    log_end: int | None = None  # one partition's
    export_query: str = ""

    @property
    def rows(self) -> list[BrowseRow]:
        return [e for e in self.entries if not e.is_gap]


def parse_cursor(text: str) -> dict[int, int]:
    """`0:120,1:98` as {0: 120, 1: 98}; anything else is refused with MSG_BAD_CURSOR."""
    text = (text or "").strip()
    if not text:
        return {}
    if len(text) > MAX_CURSOR_CHARS or not _CURSOR.fullmatch(text):
        raise ConsoleError(MSG_BAD_CURSOR)
    return {int(p): int(o) for p, o in (pair.split(":") for pair in text.split(","))}


def format_cursor(cursor: dict[int, int]) -> str:
    return ",".join(f"{p}:{o}" for p, o in sorted(cursor.items()))


def topic_partitions(cluster: str, topic: str) -> list[int]:
    """The topic's partition numbers (one metadata request): the browser's partition choices."""
    described = cluster_admin(cluster).describe_topics([topic])[topic]
    return sorted(p.partition for p in described.partitions)


def browse_page(cluster: str, topic: str, query: BrowseQuery, *, after: dict[int, int] | None = None) -> BrowsePage:
    """A page of the list; `after` (a previous page's cursor) continues it."""
    if query.one_partition_as_is:
        return _partition_page(cluster, topic, query, after)
    return _scanned_page(cluster, topic, query, after)


def browse_tail(cluster: str, topic: str, query: BrowseQuery, tops: dict[int, int]) -> BrowsePage | None:
    """The records written above `tops` (the offset after the newest one shown, per partition), newest first,
    with the tops to poll from next; None when nothing arrived (a DescribeTopics and a ListOffsets round, no
    record read)."""
    spec = _spec(topic, replace(query, start="oldest"), max_matches=TAIL_MAX)
    state = search_begin(cluster, spec)
    # A partition the page did not know (added since) is new from its start.
    cursors = tuple(ScanCursor(c.partition, low, c.high, low) for c in state.cursors
                    for low in [min(max(tops.get(c.partition, c.low), c.low), c.high)])
    if all(c.next >= c.high for c in cursors):
        return None
    state, matches = search_step(replace(state, cursors=cursors, done=False), step_s=1.0)
    rows = sorted(browse_rows(cluster, matches), key=lambda r: (r.timestamp or 0, r.offset), reverse=True)
    return BrowsePage(query=query, entries=rows, cursor={}, more=False, partitions=tuple(tops),
                      range_total=state.total, scanned=state.scanned,
                      tops={c.partition: c.next for c in state.cursors})


def _partition_page(cluster: str, topic: str, query: BrowseQuery, after: dict[int, int] | None) -> BrowsePage:
    partition = query.partition
    going_on = after.get(partition) if after else None
    kwargs = {"limit": query.limit, "isolation": query.isolation}
    if query.newest_first:
        page = records_page(cluster, topic, partition, end=going_on, **kwargs)
    elif going_on is not None or query.start in ("oldest", "offset"):
        start = going_on if going_on is not None else (query.offset or 0) if query.start == "offset" else 0
        page = records_page(cluster, topic, partition, offset=start, **kwargs)
    else:
        page = records_page(cluster, topic, partition, timestamp_ms=query.time_ms, **kwargs)
    rows = [BrowseRow(topic=topic, partition=partition, offset=r.offset, timestamp=r.timestamp,
                      timestamp_type=r.timestamp_type, key=r.key, value=r.value, headers=r.headers, size=r.size,
                      transaction=r.transaction) for r in page.records]
    entries = sorted([*rows, *page.gaps], key=_offset_of, reverse=query.newest_first)
    readable_end = min(page.log_end, page.last_stable) if query.isolation == "read_committed" else page.log_end
    if query.newest_first:
        cursor, more = {partition: page.start}, page.start > page.log_start
        tops = {} if going_on is not None else {partition: page.upto}
    else:
        cursor, more, tops = {partition: page.upto}, page.upto < readable_end, {}
    return BrowsePage(query=query, entries=entries, cursor=cursor, more=more, partitions=(partition,),
                      range_total=max(0, page.log_end - page.log_start), tops=tops, held_back=page.held_back,
                      last_stable=page.last_stable, log_end=page.log_end, export_query=_page_export(page))


def _offset_of(entry) -> int:
    return entry.first if entry.is_gap else entry.offset


def _page_export(page: RecordsPage) -> str:
    """The export's query string for exactly the offsets a one-partition page covered."""
    end = max(page.upto or page.start, page.start)
    return urlencode({"partitions": page.partition, "start": page.start, "end": end, "isolation": page.isolation,
                      "max_matches": max(1, end - page.start)})


def _spec(topic: str, query: BrowseQuery, *, max_matches: int) -> SearchSpec:
    start = {"offset": Bound("offset", query.offset or 0), "time": Bound("time", query.time_ms or 0)}.get(
        query.start, Bound("earliest"))
    return SearchSpec(topic=topic, partitions=None if query.partition is None else (query.partition,), start=start,
                      filter=query.filter, newest_first=query.newest_first, isolation=query.isolation,
                      max_matches=max_matches, max_seconds=STEP_S + 1)


def _scanned_page(cluster: str, topic: str, query: BrowseQuery, after: dict[int, int] | None) -> BrowsePage:
    state = search_begin(cluster, _spec(topic, query, max_matches=query.limit))
    tops = {} if after else {c.partition: c.high for c in state.cursors} if query.newest_first else {}
    if after:
        state = replace(state, cursors=tuple(_going_on(c, after) for c in state.cursors))
    state, matches = search_step(state, step_s=STEP_S)
    rows = browse_rows(cluster, matches)
    if not query.newest_first:  # the scan hands partitions over batch by batch: shown in time order
        rows.sort(key=lambda r: (r.timestamp or 0, r.partition, r.offset))
    cursor = {c.partition: c.next for c in state.cursors}
    more = any(c.next > c.low for c in state.cursors) if query.newest_first else any(
        c.next < c.high for c in state.cursors)
    return BrowsePage(query=query, entries=rows, cursor=cursor, more=more,
                      partitions=tuple(c.partition for c in state.cursors), range_total=state.total,
                      scanned=state.scanned, tops=tops, export_query=_filters_export(query))


def _going_on(cursor: ScanCursor, after: dict[int, int]) -> ScanCursor:
    if cursor.partition not in after:
        return cursor
    return replace(cursor, next=min(max(after[cursor.partition], cursor.low), cursor.high))


def _filters_export(query: BrowseQuery) -> str:
    """The export's query string for what the filters select (the export has its own limit)."""
    start = {"offset": str(query.offset or 0), "time": iso_utc(query.time_ms)}.get(query.start, "earliest")
    fields = {"partitions": "" if query.partition is None else query.partition, "start": start,
              "order": "newest" if query.newest_first else "oldest", "isolation": query.isolation,
              "key": query.key, "value": query.value}
    return urlencode({k: v for k, v in fields.items() if v != ""})


def iso_utc(ms: int | None) -> str:
    """Epoch milliseconds as ISO 8601 in UTC (2026-11-29T02:41:00Z, with milliseconds when there are some)."""
    moment = datetime.fromtimestamp((ms or 0) / 1000, UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return text + (f".{moment.microsecond // 1000:03d}Z" if moment.microsecond else "Z")


def browse_rows(cluster: str, matches: list[ScanMatch]) -> list[BrowseRow]:
    """Rows for a scan's matches (the browser's, a search's), decoded through the cluster's registry."""
    rows = []
    for match in decoded_matches(matches, cluster=cluster):
        record = match.record
        rows.append(BrowseRow(
            topic=record.topic, partition=record.partition, offset=record.offset, timestamp=record.timestamp,
            timestamp_type=record.timestamp_type, key=present(record.key, match.key),
            value=present(record.value, match.value),
            headers=[(name, decode_bytes(data)) for name, data in record.headers],
            size=len(record.key or b"") + len(record.value or b"")))
    return rows
