"""Server-side search of a topic: an assign-only consumer (no group, nothing committed) reads a fixed offset range
and keeps the records that pass the filters.

A scan goes in chunks of bounded time, each picking up at the cursors the last one returned, so a caller (a
page polling, the shell looping) can show progress, stop at any moment and never hold a request longer than a
chunk. Within one client process a scan's consumer is kept between chunks (keyed by the scan's id) and simply
continues when the cursors are where it stopped, so chunking costs no new connection or fetch."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable

from confluent_kafka import Consumer, KafkaError, TopicPartition

from console.kafka.client import client_config
from console.kafka.errors import InvalidRequest
from console.kafka.mapping import kafka_error_to_exception
from console.kafka.types import (
    ClusterConnection, DecodedPart, RecordInfo, ScanChunk, ScanCursor, ScanFilter, ScanMatch, ScanRequest,
)

BATCH = 10_000
NEWEST_FIRST_WINDOW = 2_000  # offsets per partition read forwards at a time when scanning backwards
KEEP_CONSUMERS = 8
IDLE_S = 60.0
_TIMESTAMP_TYPES = {0: "none", 1: "create-time", 2: "log-append-time"}


class _Decoder:
    """Decoded keys and values for the filters that need them, through the registry when the cluster has one and
    the record is in its wire format, else as JSON when the bytes parse."""

    def __init__(self, connection: ClusterConnection, topic: str, timeout: float) -> None:
        self.topic = topic
        self.codec = None
        if connection.registry_url:
            from console.kafka.registry import registry_codec  # heavy imports, for registry clusters only

            self.codec = registry_codec(connection, timeout=timeout)

    def part(self, data: bytes | None, is_key: bool) -> DecodedPart | None:
        if self.codec is None or not data or data[0] != 0:
            return None
        return self.codec.decode(self.topic, data, is_key=is_key)

    @staticmethod
    def value_of(data: bytes | None, part: DecodedPart | None) -> object:
        if part is not None:
            return part.value
        if not data:
            return None
        try:
            return json.loads(data)
        except ValueError:
            return None

    @staticmethod
    def text_of(data: bytes | None, part: DecodedPart | None) -> bytes:
        """What substring and regex filters look at: the decoded JSON for a registry record, else the bytes."""
        if part is not None and part.value is not None:
            return json.dumps(part.value, ensure_ascii=False, separators=(",", ":")).encode()
        return data or b""


def _field_path(value: object, path: list[str]) -> object:
    for step in path:
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return _MISSING
    return value


_MISSING = object()


def _equals(found: object, wanted: str) -> bool:
    if found is _MISSING:
        return False
    try:
        literal = json.loads(wanted)
    except ValueError:
        literal = wanted
    return found == literal or (isinstance(found, str) and found == wanted) or str(found) == wanted


def compile_filter(spec: ScanFilter) -> tuple[Callable[[bytes | None, DecodedPart | None], bool] | None,
                                               Callable[[bytes | None, DecodedPart | None], bool] | None,
                                               Callable[[list], bool] | None, bool, bool]:
    """Predicates on the key, the value and the headers; then whether the key and the value must be decoded.
    Raises InvalidRequest for a regular expression or JSONPath that does not compile."""
    def text_test(contains: str, regex: str):
        tests = []
        if contains:
            needle = contains.encode()
            tests.append(lambda text: needle in text)
        if regex:
            try:
                pattern = re.compile(regex.encode())
            except re.error as exc:
                raise InvalidRequest(f"The regular expression {regex!r} does not compile: {exc}.") from exc
            tests.append(lambda text: pattern.search(text) is not None)
        return tests

    key_tests, value_tests = text_test(spec.key_contains, spec.key_regex), text_test(spec.value_contains,
                                                                                      spec.value_regex)
    fields = [(path.split("."), wanted) for path, wanted in spec.value_fields]
    finder = None
    if spec.value_jsonpath:
        import jsonpath  # only scans that use it pay for the import

        try:
            compiled = jsonpath.compile(spec.value_jsonpath)
        except jsonpath.JSONPathError as exc:
            first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InvalidRequest(f"The JSONPath {spec.value_jsonpath!r} does not compile: {first_line}.") from exc
        root_filter = spec.value_jsonpath.replace(" ", "").startswith("$[?")

        def finds(value: object) -> bool:
            if value is None:
                return False
            # "$[?@.amount > 100]" means the record itself to a person; RFC 9535 applies it to the record's members.
            return bool(compiled.findall(value)) or (root_filter and bool(compiled.findall([value])))

        finder = finds

    decode_key = bool(key_tests)
    decode_value = bool(value_tests or fields or finder)

    def key_ok(data, part) -> bool:
        text = _Decoder.text_of(data, part)
        return all(test(text) for test in key_tests)

    def value_ok(data, part) -> bool:
        if value_tests:
            text = _Decoder.text_of(data, part)
            if not all(test(text) for test in value_tests):
                return False
        if fields or finder:
            value = _Decoder.value_of(data, part)
            if any(not _equals(_field_path(value, path), wanted) for path, wanted in fields):
                return False
            if finder is not None and not finder(value):
                return False
        return True

    name, needle = spec.header_name, spec.header_contains.encode()

    def header_ok(headers: list) -> bool:
        return any(k == name and (not needle or needle in (v or b"")) for k, v in headers or ())

    return (key_ok if key_tests else None, value_ok if decode_value else None, header_ok if name else None,
            decode_key, decode_value)


class _OpenScan:
    def __init__(self, consumer: Consumer) -> None:
        self.consumer = consumer
        self.assigned: dict[int, int] = {}  # partition -> the next offset the consumer will hand out
        self.used = time.monotonic()


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
            scan = _OpenScan(Consumer(client_config(connection, **{
                "group.id": f"console-search-{uuid.uuid4().hex}", "enable.auto.commit": False,
                "enable.auto.offset.store": False, "enable.partition.eof": True, "auto.offset.reset": "earliest",
                "isolation.level": request.isolation, "fetch.wait.max.ms": 100,
                "queued.max.messages.kbytes": 65536, "fetch.max.bytes": 52428800,
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
    key_ok, value_ok, header_ok, decode_key, decode_value = compile_filter(request.filter)
    decoder = _Decoder(connection, request.topic, timeout) if (decode_key or decode_value) else None
    scan = _consumer_for(connection, request)
    try:
        if request.newest_first:
            return _newest_first(connection, scan, request, decoder, key_ok, value_ok, header_ok, timeout)
        return _oldest_first(connection, scan, request, decoder, key_ok, value_ok, header_ok, timeout)
    except BaseException:
        close_scan(request.scan_id)
        raise


def _check(message, request: ScanRequest, decoder, key_ok, value_ok, header_ok) -> ScanMatch | None:
    spec = request.filter
    if spec.ts_from_ms is not None or spec.ts_to_ms is not None:
        ts = message.timestamp()[1]
        if (spec.ts_from_ms is not None and ts < spec.ts_from_ms) or (spec.ts_to_ms is not None and ts > spec.ts_to_ms):
            return None
    if header_ok is not None and not header_ok(message.headers()):
        return None
    key_part = value_part = None
    if key_ok is not None:
        key = message.key()
        key_part = decoder.part(key, True)
        if not key_ok(key, key_part):
            return None
    if value_ok is not None:
        value = message.value()
        value_part = decoder.part(value, False)
        if not value_ok(value, value_part):
            return None
    ts_type, ts = message.timestamp()
    record = RecordInfo(topic=request.topic, partition=message.partition(), offset=message.offset(),
                        timestamp=ts if ts_type else None, timestamp_type=_TIMESTAMP_TYPES.get(ts_type, "none"),
                        key=message.key(), value=message.value(), headers=tuple(message.headers() or ()))
    return ScanMatch(record=record, key=key_part, value=value_part)


def _raise_for(connection: ClusterConnection, error: KafkaError, timeout: float) -> None:
    raise kafka_error_to_exception(error, cluster=connection.name, timeout=timeout)


def _oldest_first(connection, scan: _OpenScan, request: ScanRequest, decoder, key_ok, value_ok, header_ok,
                  timeout: float) -> ScanChunk:
    cursors = {c.partition: c for c in request.cursors}
    nexts = {p: c.next for p, c in cursors.items() if c.next < c.high}
    ends = {p: cursors[p].high for p in nexts}
    if not nexts:
        return ScanChunk(cursors=request.cursors, matches=(), scanned=0, done=True)
    if scan.assigned != nexts:
        scan.consumer.assign([TopicPartition(request.topic, p, o) for p, o in nexts.items()])
        scan.assigned = dict(nexts)
    filtering = key_ok or value_ok or header_ok or request.filter.ts_from_ms is not None \
        or request.filter.ts_to_ms is not None
    matches: list[ScanMatch] = []
    scanned = 0
    cut = False  # stopped inside a batch: the consumer holds records this chunk did not look at
    deadline = time.monotonic() + request.max_seconds
    idle_deadline = time.monotonic() + timeout
    consume = scan.consumer.consume
    while nexts and not cut and time.monotonic() < deadline and scanned < request.max_records:
        batch = consume(num_messages=min(BATCH, request.max_records - scanned), timeout=0.2)
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
            if filtering:
                match = _check(message, request, decoder, key_ok, value_ok, header_ok)
                if match is not None:
                    matches.append(match)
            else:
                matches.append(_check(message, request, decoder, None, None, None))
    for partition, offset in nexts.items():
        cursors[partition] = ScanCursor(partition, cursors[partition].low, ends[partition], offset)
    scan.assigned = {} if cut else dict(nexts)
    ordered = tuple(cursors[p] for p in sorted(cursors))
    return ScanChunk(cursors=ordered, matches=tuple(matches), scanned=scanned,
                     done=all(c.next >= c.high for c in ordered))


def _newest_first(connection, scan: _OpenScan, request: ScanRequest, decoder, key_ok, value_ok, header_ok,
                  timeout: float) -> ScanChunk:
    """Windows of offsets read forwards from the end of each partition down to its start; the matches of each
    window come back newest first. `next` is the exclusive top of the part not read yet, `low` the bottom."""
    cursors = {c.partition: c for c in request.cursors}
    matches: list[ScanMatch] = []
    scanned = 0
    deadline = time.monotonic() + request.max_seconds
    while time.monotonic() < deadline and scanned < request.max_records and len(matches) < request.max_matches:
        open_parts = {p: c for p, c in cursors.items() if c.next > c.low}
        if not open_parts:
            break
        windows = {p: (max(c.low, c.next - NEWEST_FIRST_WINDOW), c.next) for p, c in open_parts.items()}
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
                match = _check(message, request, decoder, key_ok, value_ok, header_ok)
                if match is not None:
                    found[partition].append(match)
                if message.offset() + 1 >= pending[partition][1]:
                    pending.pop(partition)
        # The window's matches newest first by timestamp across partitions; those that do not fit are read again
        # by the next chunk, from just below the last one kept of their partition.
        window = sorted((m for found_in in found.values() for m in found_in),
                        key=lambda m: (m.record.timestamp or 0, m.record.offset), reverse=True)
        kept = window[:max(0, request.max_matches - len(matches))]
        dropped = {m.record.partition for m in window[len(kept):]}
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
