"""The lines of an import file as records to write, pure: JSON lines (an object a line) or CSV (a header row
naming its columns), each record or a bad line's number and reason. Read a line at a time, so a file of any
size is checked in bounded memory; line numbers are the file's own (1 is the first line, a CSV's header row).

Columns (JSON fields): value (required), key, headers (a JSON array of [name, value] pairs or an object),
partition, timestamp (milliseconds or an ISO 8601 time). Other columns (topic, offset: an export's) are ignored,
so an export's file imports as it is."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from console.csv_cells import unguard_formula

COLUMNS = ("key", "value", "headers", "partition", "timestamp")
MAX_LINE_CHARS = 1_000_000
MSG_NOT_OBJECT = "not a JSON object"
MSG_BAD_JSON = "not JSON: {detail}"
MSG_NO_VALUE = "no value (a null value is written as null; a tombstone needs it said)"
MSG_BAD_PARTITION = "partition {value!r} is not a number 0 or more"
MSG_BAD_TIMESTAMP = "timestamp {value!r} is neither milliseconds nor a time like 2026-11-21T03:00:00Z"
MSG_BAD_HEADERS = "headers are a JSON array of [name, value] pairs or an object of names to text"
MSG_LONG_LINE = f"longer than {MAX_LINE_CHARS} characters"
MSG_CSV_COLUMNS = "the header row must name a value column (and may name key, headers, partition, timestamp)"
MSG_CSV_WIDTH = "{found} cells where the header row names {expected}"


@dataclass(frozen=True)
class ImportLine:
    """A record as the file gives it: key and value are text or JSON (objects, lists) or None."""

    line: int
    key: object
    value: object
    headers: tuple[tuple[str, str | None], ...] = ()
    partition: int | None = None
    timestamp: int | None = None


@dataclass(frozen=True)
class BadLine:
    line: int
    reason: str


class LineRefused(ValueError):
    pass


def _partition(value: object) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and value.isdigit())):
        raise LineRefused(MSG_BAD_PARTITION.format(value=value))
    number = int(value)
    if number < 0 or number > 2**31 - 1:
        raise LineRefused(MSG_BAD_PARTITION.format(value=value))
    return number


def _timestamp(value: object) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63:
        return value
    if isinstance(value, str):
        if value.isdigit() and len(value) < 19:
            return int(value)
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
            if moment.year >= 1970:
                return int(moment.timestamp() * 1000)
    raise LineRefused(MSG_BAD_TIMESTAMP.format(value=value))


def _headers(value: object) -> tuple[tuple[str, str | None], ...]:
    if value in (None, ""):
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise LineRefused(MSG_BAD_HEADERS) from exc
    if isinstance(value, dict):
        value = list(value.items())
    if not isinstance(value, list):
        raise LineRefused(MSG_BAD_HEADERS)
    pairs = []
    for pair in value:
        if (not isinstance(pair, list | tuple) or len(pair) != 2 or not isinstance(pair[0], str)
                or not (pair[1] is None or isinstance(pair[1], str))):
            raise LineRefused(MSG_BAD_HEADERS)
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def _record(line: int, fields: dict, *, empty_is_null: bool) -> ImportLine:
    if "value" not in fields:
        raise LineRefused(MSG_NO_VALUE)

    def part(name: str) -> object:
        found = fields.get(name)
        return None if empty_is_null and found == "" else found

    return ImportLine(line=line, key=part("key"), value=part("value"), headers=_headers(fields.get("headers")),
                      partition=_partition(fields.get("partition")), timestamp=_timestamp(fields.get("timestamp")))


def parse_jsonl(lines: Iterable[str]) -> Iterator[ImportLine | BadLine]:
    """One record per non-blank line."""
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        if len(text) > MAX_LINE_CHARS:
            yield BadLine(number, MSG_LONG_LINE)
            continue
        try:
            fields = json.loads(text)
        except ValueError as exc:
            yield BadLine(number, MSG_BAD_JSON.format(detail=str(exc).split(":")[0]))
            continue
        if not isinstance(fields, dict):
            yield BadLine(number, MSG_NOT_OBJECT)
            continue
        try:
            yield _record(number, fields, empty_is_null=False)
        except LineRefused as exc:
            yield BadLine(number, str(exc))


def parse_csv(lines: Iterable[str]) -> Iterator[ImportLine | BadLine]:
    """RFC 4180 with a header row; an empty cell is a null key or value (as the export writes them), and a key or
    value the export guarded from spreadsheets' formulas loses its guard (console/csv_cells.py). A quoted cell
    may hold new lines: a record's number is the line it starts on."""
    reader = csv.reader(lines, strict=True)
    try:
        names = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        yield BadLine(1, str(exc))
        return
    names = [n.strip().lower() for n in names]
    if "value" not in names:
        yield BadLine(1, MSG_CSV_COLUMNS)
        return
    started = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield BadLine(started, str(exc))
            started = reader.line_num + 1
            continue
        number, started = started, reader.line_num + 1
        if not cells:
            continue
        if len(cells) != len(names):
            yield BadLine(number, MSG_CSV_WIDTH.format(found=len(cells), expected=len(names)))
            continue
        try:
            cells = [unguard_formula(cell) if name in ("key", "value") else cell
                     for name, cell in zip(names, cells, strict=True)]
            yield _record(number, dict(zip(names, cells, strict=True)), empty_is_null=True)
        except LineRefused as exc:
            yield BadLine(number, str(exc))


def parse(kind: str, lines: Iterable[str]) -> Iterator[ImportLine | BadLine]:
    return parse_csv(lines) if kind == "csv" else parse_jsonl(lines)


def payload_text(value: object) -> str | None:
    """What is written for a key or value: text as it is, JSON (objects, lists, numbers) as compact JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (the Java producer's and librdkafka's murmur2 partitioner), to show a keyed record's
    partition before it is written."""
    m, r, mask = 0x5BD1E995, 24, 0xFFFFFFFF
    length = len(data)
    h = (0x9747B28C ^ length) & mask
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & mask
        k ^= k >> r
        k = (k * m) & mask
        h = (h * m) & mask
        h ^= k
    rest = data[whole:]
    if len(rest) == 3:
        h ^= rest[2] << 16
    if len(rest) >= 2:
        h ^= rest[1] << 8
    if rest:
        h ^= rest[0]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return h


def partition_for(key: bytes | None, partitions: int) -> int | None:
    """Where a record without a partition goes: the key's murmur2 hash; None for a null key (the producer
    spreads those)."""
    if key is None:
        return None
    return (murmur2(key) & 0x7FFFFFFF) % partitions
