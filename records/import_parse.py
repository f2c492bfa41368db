"""The records of an import file, pure: JSON lines (an object a line), CSV (a header row naming its columns) or an
Avro object container file, each record or a bad line's number and reason. Read a record at a time, so a file of
any size is checked in bounded memory; line numbers are the file's own (1 is the first line, a CSV's header row;
for Avro, the record's number in the file).

Fields (JSON fields, CSV columns, Avro fields): value (required), key, headers, partition, timestamp (milliseconds
or an ISO 8601 time). Where `key_encoding`/`value_encoding` are given (an export's files), key and value are bytes
in that encoding (records/byte_fields.py) and are written exactly; without them, text is written as UTF-8 and JSON
objects as compact JSON. Headers are [name, value] or [name, value, encoding] items, or an object of names to
text. Avro's bytes fields are bytes as they are. Other fields (topic, offset, timestamp_type, the decoded forms,
masked: an export's) are ignored, so an export's file imports as it is."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import BinaryIO

import fastavro

from console.csv_cells import unguard_formula
from records.byte_fields import FieldRefused, field_to_bytes

COLUMNS = ("key", "value", "headers", "partition", "timestamp")
KINDS = ("jsonl", "csv", "avro")
# A line holds a record's bytes (base64 makes them a third longer) and their decoded form beside them: room for
# records far past a broker's default limit of 1 MiB, while a line stays a bounded amount of memory.
MAX_LINE_CHARS = 64 * 1024 * 1024
MSG_NOT_OBJECT = "not a JSON object"
MSG_BAD_JSON = "not JSON: {detail}"
MSG_NO_VALUE = "no value (a null value is written as null; a tombstone needs it said)"
MSG_BAD_PARTITION = "partition {value!r} is not a number 0 or more"
MSG_BAD_TIMESTAMP = "timestamp {value!r} is neither milliseconds nor a time like 2026-11-21T03:00:00Z"
MSG_BAD_HEADERS = ("headers are a JSON array of [name, value] or [name, value, encoding] items, or an object of "
                   "names to text")
MSG_NOT_UTF8 = "not UTF-8 text (bytes that are not text belong in a field with an encoding, such as base64)"
MSG_BAD_AVRO = "not an Avro object container file: {detail}"
MSG_LONG_LINE = f"longer than {MAX_LINE_CHARS} characters"
MSG_CSV_COLUMNS = "the header row must name a value column (and may name key, headers, partition, timestamp)"
MSG_CSV_WIDTH = "{found} cells where the header row names {expected}"


@dataclass(frozen=True)
class ImportLine:
    """A record as the file gives it: key and value are bytes (written as they are), text or JSON (objects,
    lists), or None; header values bytes, text or None."""

    line: int
    key: object
    value: object
    headers: tuple[tuple[str, bytes | str | None], ...] = ()
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


def _header_value(item: list | tuple, number: int) -> bytes | str | None:
    name, value = item[0], item[1]
    if len(item) == 3:
        try:
            return field_to_bytes(value, item[2], what=f"header {name!r} (#{number})")
        except FieldRefused as exc:
            raise LineRefused(str(exc)) from exc
    if value is None or isinstance(value, str | bytes):
        return value
    # A header written as JSON (older exports wrote a JSON header's decoded form): its compact JSON text.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _headers(value: object) -> tuple[tuple[str, bytes | str | None], ...]:
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
    for number, item in enumerate(value, start=1):
        if isinstance(item, dict) and "name" in item:  # Avro's header records
            item = (item["name"], item.get("value"))
        if not isinstance(item, list | tuple) or len(item) not in (2, 3) or not isinstance(item[0], str):
            raise LineRefused(MSG_BAD_HEADERS)
        pairs.append((item[0], _header_value(item, number)))
    return tuple(pairs)


def _payload(fields: dict, name: str, *, empty_is_null: bool) -> object:
    """A key or value: bytes where the file says their encoding, else text or JSON as the file holds it."""
    found = fields.get(name)
    encoding_field = f"{name}_encoding"
    if encoding_field in fields:
        encoding = fields[encoding_field]
        if empty_is_null and encoding == "" and found == "":
            return None
        try:
            return field_to_bytes(found, encoding, what=name)
        except FieldRefused as exc:
            raise LineRefused(str(exc)) from exc
    return None if empty_is_null and found == "" else found


def _record(line: int, fields: dict, *, empty_is_null: bool) -> ImportLine:
    if "value" not in fields:
        raise LineRefused(MSG_NO_VALUE)
    return ImportLine(line=line, key=_payload(fields, "key", empty_is_null=empty_is_null),
                      value=_payload(fields, "value", empty_is_null=empty_is_null),
                      headers=_headers(fields.get("headers")), partition=_partition(fields.get("partition")),
                      timestamp=_timestamp(fields.get("timestamp")))


def _not_utf8(text: str) -> bool:
    """Whether a line read with surrogateescape held bytes that are not UTF-8 (they would be written changed)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_jsonl(lines: Iterable[str]) -> Iterator[ImportLine | BadLine]:
    """One record per non-blank line."""
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        if len(text) > MAX_LINE_CHARS:
            yield BadLine(number, MSG_LONG_LINE)
            continue
        if _not_utf8(text):
            yield BadLine(number, MSG_NOT_UTF8)
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
    csv.field_size_limit(MAX_LINE_CHARS)
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
        if any(_not_utf8(cell) for cell in cells):
            yield BadLine(number, MSG_NOT_UTF8)
            continue
        try:
            cells = [unguard_formula(cell) if name in ("key", "value") else cell
                     for name, cell in zip(names, cells, strict=True)]
            yield _record(number, dict(zip(names, cells, strict=True)), empty_is_null=True)
        except LineRefused as exc:
            yield BadLine(number, str(exc))


def parse_avro(data: BinaryIO) -> Iterator[ImportLine | BadLine]:
    """An Avro object container file whose records have a value field (and any of key, headers, partition,
    timestamp), as the export writes them: bytes fields are the record's bytes, string fields its text."""
    try:
        reader = fastavro.reader(data)
    except (ValueError, EOFError, TypeError, KeyError, fastavro.read.SchemaResolutionError) as exc:
        yield BadLine(1, MSG_BAD_AVRO.format(detail=str(exc) or type(exc).__name__))
        return
    number = 0
    while True:
        number += 1
        try:
            fields = next(reader)
        except StopIteration:
            return
        except (ValueError, EOFError, TypeError, KeyError, IndexError, UnicodeDecodeError) as exc:
            yield BadLine(number, MSG_BAD_AVRO.format(detail=str(exc) or type(exc).__name__))
            return
        if not isinstance(fields, dict):
            yield BadLine(number, MSG_NOT_OBJECT)
            continue
        try:
            yield _record(number, fields, empty_is_null=False)
        except LineRefused as exc:
            yield BadLine(number, str(exc))


def parse(kind: str, lines) -> Iterator[ImportLine | BadLine]:
    """`lines`: text lines for jsonl and csv, a binary file for avro."""
    if kind == "avro":
        return parse_avro(lines)
    return parse_csv(lines) if kind == "csv" else parse_jsonl(lines)


def kind_of_file(name: str) -> str:
    """The format a file's name says: .csv, .avro, else JSON lines."""
    lowered = name.lower()
    return "csv" if lowered.endswith(".csv") else "avro" if lowered.endswith(".avro") else "jsonl"


def parse_file(kind: str, data: BinaryIO) -> Iterator[ImportLine | BadLine]:
    """The records of a file opened in binary. Text formats are read as UTF-8 with surrogateescape, so bytes
    that are not UTF-8 make their line a bad line instead of being replaced without a word."""
    if kind == "avro":
        yield from parse_avro(data)
        return
    text = io.TextIOWrapper(data, encoding="utf-8", errors="surrogateescape", newline="")
    try:
        yield from parse(kind, text)
    finally:
        text.detach()  # the caller's file stays open (a job reads its position for progress)


def payload_text(value: object) -> str | None:
    """A key or value as a preview shows it: text as it is, bytes as their UTF-8 text (else hex), JSON
    (objects, lists, numbers) as compact JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.hex(" ")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def payload_bytes(value: object) -> bytes | None:
    """What is written for a key or value given without a subject: bytes as they are, text as UTF-8, JSON as
    compact JSON. Raises LineRefused for text that no bytes stand for (a lone surrogate)."""
    if value is None or isinstance(value, bytes):
        return value
    try:
        return payload_text(value).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise LineRefused(MSG_NOT_UTF8) from exc


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
