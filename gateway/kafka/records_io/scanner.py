"""Server-side search of a topic: an assign-only consumer (no group, nothing committed) reads a fixed offset range
and keeps the records that pass the filters.

A scan goes in chunks of bounded time, each picking up at the cursors the last one returned, so a caller (a
page polling, the shell looping) can show progress, stop at any moment and never hold a request longer than a
chunk. Within one client process a scan's consumer is kept between chunks (keyed by the scan's id) and simply
continues when the cursors are where it stopped, so chunking costs no new connection or fetch."""

from __future__ import annotations

import heapq
import threading
import time
import uuid
from collections import OrderedDict

from confluent_kafka import Consumer, KafkaError, TopicPartition

from gateway.kafka.librdkafka.client import client_config
from gateway.kafka.librdkafka.mapping import kafka_error_to_exception
from gateway.kafka.records_io.filters import NOT_DECODED, Parts, compile_test
from gateway.kafka.types import (
    ClusterConnection, DecodedPart, RecordInfo, ScanChunk, ScanCursor, ScanMatch, ScanRequest,
)

BATCH = 10_000
NEWEST_FIRST_WINDOW = 2_000  # offsets per partition read forwards at a time when scanning backwards
KEEP_CONSUMERS = 8
IDLE_S = 60.0
_TIMESTAMP_TYPES = {0: "none", 1: "create-time", 2: "log-append-time"}


def _decoder(connection: ClusterConnection, topic: str, timeout: float):
    """The registry's decoding for filters that need decoded values; None for a cluster without a registry."""
    if not connection.registry_url:
        return None
    from gateway.kafka.schema_registry import registry_codec  # heavy imports, for registry clusters only

    codec = registry_codec(connection, timeout=timeout)

    def decode(data: bytes | None, is_key: bool) -> DecodedPart | None:
        return codec.decode(topic, data, is_key=is_key) if data and data[0] == 0 else None

    return decode


class _OpenScan:
    def __init__(self, consumer: Consumer) -> None:
        self.consumer = consumer
        self.assigned: dict[int, int] = {}  # partition -> the next offset the consumer will hand out
        self.used = time.monotonic()


# What one scan's consumer may hold fetched ahead of the reader, over all its partitions. With assign() librdkafka
# applies queued.max.messages.kbytes to each partition's queue, and a reader slower than the fetches (an export
# writing a file) keeps every queue full: the budget is split between the partitions so that a scan of a topic of
# many partitions holds no more than one of few (a fetch may still bring one record batch past it).
PREFETCH_KB = 32 * 1024
MIN_PARTITION_KB = 64


def prefetch_kb(partitions: int) -> int:
    return max(MIN_PARTITION_KB, PREFETCH_KB // max(1, partitions))


_open: OrderedDict[str, _OpenScan] = OrderedDict()
_open_lock = threading.Lock()


def _consumer_for(connection: ClusterConnection, request: ScanRequest) -> _OpenScan:
    with _open_lock:
        now = time.monotonic()
        for key in [k for k, s in _open.items() if now - s.used > IDLE_S]:
            _open.pop(key).consumer.close()
        scan = _open.pop(request.scan_id, None)
        if scan is None:
            while len(_open) >= KEEP_CONSUMERS:
                _open.popitem(last=False)[1].consumer.close()
            per_partition_kb = prefetch_kb(len(request.cursors))
            scan = _OpenScan(Consumer(client_config(connection, **{
                "group.id": f"console-search-{uuid.uuid4().hex}", "enable.auto.commit": False,
                "enable.auto.offset.store": False, "enable.partition.eof": True, "auto.offset.reset": "earliest",
                "isolation.level": request.isolation, "fetch.wait.max.ms": 100,
                "queued.max.messages.kbytes": per_partition_kb, "fetch.max.bytes": PREFETCH_KB * 1024,
            })))
        scan.used = now
        _open[request.scan_id] = scan  # most recently used last
        return scan


def close_scan(scan_id: str) -> None:
    with _open_lock:
        scan = _open.pop(scan_id, None)
    if scan is not None:
        scan.consumer.close()


def scan_chunk(connection: ClusterConnection, request: ScanRequest, *, timeout: float) -> ScanChunk:
    """Reads on from the cursors for at most `request.max_seconds` (and `max_records` records), returning the
    matches in scan order and the cursors to continue from."""
    deadline = time.monotonic() + request.max_seconds
    # The filter's test sees the deadline too: a JSONPath may not outrun it inside one record.
    test = compile_test(request.filter, _decoder(connection, request.topic, timeout), deadline)
    scan = _consumer_for(connection, request)
    try:
        if request.newest_first:
            return _newest_first(connection, scan, request, test, timeout, deadline)
        return _oldest_first(connection, scan, request, test, timeout, deadline)
    except BaseException:
        close_scan(request.scan_id)
        raise


def _match(message, topic: str, parts: Parts) -> ScanMatch:
    ts_type, ts = message.timestamp()
    record = RecordInfo(topic=topic, partition=message.partition(), offset=message.offset(),
                        timestamp=ts if ts_type else None, timestamp_type=_TIMESTAMP_TYPES.get(ts_type, "none"),
                        key=message.key(), value=message.value(), headers=tuple(message.headers() or ()))
    return ScanMatch(record=record, key=parts[0], value=parts[1])


def _raise_for(connection: ClusterConnection, error: KafkaError, timeout: float) -> None:
    raise kafka_error_to_exception(error, cluster=connection.name, timeout=timeout)


def _oldest_first(connection, scan: _OpenScan, request: ScanRequest, test, timeout: float,
                  deadline: float) -> ScanChunk:
    cursors = {c.partition: c for c in request.cursors}
    nexts = {p: c.next for p, c in cursors.items() if c.next < c.high}
    ends = {p: cursors[p].high for p in nexts}
    if not nexts:
        return ScanChunk(cursors=request.cursors, matches=(), scanned=0, done=True)
    if scan.assigned != nexts:
        scan.consumer.assign([TopicPartition(request.topic, p, o) for p, o in nexts.items()])
        scan.assigned = dict(nexts)
    matches: list[ScanMatch] = []
    scanned = 0
    cut = False  # stopped inside a batch: the consumer holds records this chunk did not look at
    idle_deadline = time.monotonic() + timeout
    consume = scan.consumer.consume
    while nexts and not cut and time.monotonic() < deadline and scanned < request.max_records:
        # With no filter every record is a match: asking for no more than the matches still wanted means a chunk
        # never stops inside a batch, so the next chunk goes on from the consumer's position instead of seeking
        # (and fetching again), which is what a large export's many chunks would otherwise cost.
        room = BATCH if test is not None else request.max_matches - len(matches)
        if room <= 0:
            break
        batch = consume(num_messages=min(BATCH, request.max_records - scanned, room), timeout=0.2)
        if batch:
            idle_deadline = time.monotonic() + timeout
        elif time.monotonic() > idle_deadline:
            raise kafka_error_to_exception(KafkaError(KafkaError._TIMED_OUT), cluster=connection.name,
                                           timeout=timeout)
        for message in batch:
            if len(matches) >= request.max_matches:
                cut = True
                break
            partition = message.partition()
            if partition not in nexts:
                continue  # a partition finished earlier in this batch
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    nexts.pop(partition)
                    cursors[partition] = ScanCursor(partition, cursors[partition].low, ends[partition],
                                                    ends[partition])
                    continue
                _raise_for(connection, error, timeout)
            offset = message.offset()
            if offset >= ends[partition]:
                nexts.pop(partition)
                cursors[partition] = ScanCursor(partition, cursors[partition].low, ends[partition], ends[partition])
                continue
            scanned += 1
            nexts[partition] = offset + 1
            parts = NOT_DECODED if test is None else test(message)
            if parts is not None:
                matches.append(_match(message, request.topic, parts))
    for partition, offset in nexts.items():
        cursors[partition] = ScanCursor(partition, cursors[partition].low, ends[partition], offset)
    scan.assigned = {} if cut else dict(nexts)
    ordered = tuple(cursors[p] for p in sorted(cursors))
    return ScanChunk(cursors=ordered, matches=tuple(matches), scanned=scanned,
                     done=all(c.next >= c.high for c in ordered))


def _newest_first(connection, scan: _OpenScan, request: ScanRequest, test, timeout: float,
                  deadline: float) -> ScanChunk:
    """Windows of offsets read forwards from the end of each partition down to its start; the matches of each
    window come back newest first. `next` is the exclusive top of the part not read yet, `low` the bottom."""
    cursors = {c.partition: c for c in request.cursors}
    matches: list[ScanMatch] = []
    scanned = 0
    while time.monotonic() < deadline and scanned < request.max_records and len(matches) < request.max_matches:
        open_parts = {p: c for p, c in cursors.items() if c.next > c.low}
        if not open_parts:
            break
        # Without a filter every record is a match, so no partition can give more than the matches still wanted:
        # a page of 50 newest records reads 50 offsets a partition, not a whole window.
        size = NEWEST_FIRST_WINDOW if test is not None else min(NEWEST_FIRST_WINDOW, request.max_matches - len(matches))
        windows = {p: (max(c.low, c.next - size), c.next) for p, c in open_parts.items()}
        scan.consumer.assign([TopicPartition(request.topic, p, lo) for p, (lo, _) in windows.items()])
        found: dict[int, list[ScanMatch]] = {p: [] for p in windows}
        pending = dict(windows)
        idle_deadline = time.monotonic() + timeout
        while pending:
            batch = scan.consumer.consume(num_messages=BATCH, timeout=0.2)
            if batch:
                idle_deadline = time.monotonic() + timeout
            elif time.monotonic() > idle_deadline:
                raise kafka_error_to_exception(KafkaError(KafkaError._TIMED_OUT), cluster=connection.name,
                                               timeout=timeout)
            for message in batch:
                partition = message.partition()
                if partition not in pending:
                    continue
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        pending.pop(partition)
                        continue
                    _raise_for(connection, error, timeout)
                if message.offset() >= pending[partition][1]:
                    pending.pop(partition)
                    continue
                scanned += 1
                parts = NOT_DECODED if test is None else test(message)
                if parts is not None:
                    found[partition].append(_match(message, request.topic, parts))
                if message.offset() + 1 >= pending[partition][1]:
                    pending.pop(partition)
        # Those that do not fit are read again by the next chunk, from just below the last one kept of their
        # partition.
        kept, dropped = newest_first_merge(found, max(0, request.max_matches - len(matches)))
        for partition, (lo, _) in windows.items():
            c = cursors[partition]
            if partition in dropped:
                own = [m.record.offset for m in kept if m.record.partition == partition]
                cursors[partition] = ScanCursor(partition, c.low, c.high, min(own) if own else c.next)
            else:
                cursors[partition] = ScanCursor(partition, c.low, c.high, lo)
        matches.extend(kept)
    scan.assigned = {}
    ordered = tuple(cursors[p] for p in sorted(cursors))
    return ScanChunk(cursors=ordered, matches=tuple(matches), scanned=scanned,
                     done=all(c.next <= c.low for c in ordered))


def newest_first_merge(found: dict[int, list[ScanMatch]], limit: int) -> tuple[list[ScanMatch], set[int]]:
    """Up to `limit` of a window's matches, newest first, and the partitions some of whose matches did not fit.
    Each partition gives its matches from its highest offset down, so what is kept of a partition is always the
    top of it (the next window goes on just below, skipping nothing even where a producer's timestamps go
    backwards); the partitions are merged by the timestamp of the match each would give next."""
    left = {p: len(ms) for p, ms in found.items() if ms}
    heads = [(-(found[p][n - 1].record.timestamp or 0), -found[p][n - 1].record.offset, p) for p, n in left.items()]
    heapq.heapify(heads)
    kept: list[ScanMatch] = []
    while heads and len(kept) < limit:
        _, _, partition = heapq.heappop(heads)
        left[partition] -= 1
        kept.append(found[partition][left[partition]])
        if left[partition]:
            head = found[partition][left[partition] - 1].record
            heapq.heappush(heads, (-(head.timestamp or 0), -head.offset, partition))
    return kept, {p for p, n in left.items() if n}
