"""The files an export writes, a chunk of records at a time: JSON lines, CSV and Avro object container files.
Pure: ExportRecords in, bytes out, so a file of any length is written with a bounded number of records in memory.

Every format keeps each record's partition, offset, timestamp and its type, and its key, value and headers as
bytes, exactly: the text formats write bytes that are UTF-8 as that text and any other bytes as base64, with the
encoding beside them (records/byte_fields.py); Avro has a bytes type. The decoded form (a schema's or JSON's) is
written beside the bytes for people and tools that read the file; the import never reads it."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable

import fastavro

from console.csv_cells import guard_formula
from records.byte_fields import bytes_to_field
from records.export_rows import ExportRecord

FORMATS = {  # name -> (content type, file extension)
    "jsonl": ("application/x-ndjson", ".jsonl"),
    "csv": ("text/csv; charset=utf-8", ".csv"),
    "avro": ("application/avro", ".avro"),
}
FORMAT_VERSION = 2  # 1: values as the page showed them (text, JSON, hex text); 2: bytes with their encoding
CSV_COLUMNS = ("topic", "partition", "offset", "timestamp", "timestamp_type", "key", "key_encoding", "value",
               "value_encoding", "headers", "key_decoded", "value_decoded", "masked")
MSG_BAD_FORMAT = "'{name}' is not an export format: choose jsonl, csv or avro."

AVRO_SCHEMA = fastavro.parse_schema({
    "type": "record", "name": "ExportedRecord", "namespace": "console.export",
    "doc": "A Kafka record: its bytes as Kafka holds them, and their decoded form as JSON text where one applies.",
    "fields": [
        {"name": "topic", "type": "string"},
        {"name": "partition", "type": "int"},
        {"name": "offset", "type": "long"},
        {"name": "timestamp", "type": ["null", "long"]},
        {"name": "timestamp_type", "type": "string"},
        {"name": "key", "type": ["null", "bytes"]},
        {"name": "value", "type": ["null", "bytes"]},
        {"name": "headers", "type": {"type": "array", "items": {
            "type": "record", "name": "Header",
            "fields": [{"name": "name", "type": "string"}, {"name": "value", "type": ["null", "bytes"]}]}}},
        {"name": "key_decoded", "type": ["null", "string"]},
        {"name": "value_decoded", "type": ["null", "string"]},
        {"name": "masked", "type": {"type": "array", "items": "string"}},
    ],
})


def _json_text(value: object) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _headers(record: ExportRecord) -> list[list]:
    """[name, text, encoding] per header, in order, duplicates kept."""
    return [[name, *bytes_to_field(data)] for name, data in record.headers]


def json_row(record: ExportRecord) -> dict:
    """One record as a JSON-lines export writes it."""
    key, key_encoding = bytes_to_field(record.key)
    value, value_encoding = bytes_to_field(record.value)
    row = {"topic": record.topic, "partition": record.partition, "offset": record.offset,
           "timestamp": record.timestamp, "timestamp_type": record.timestamp_type,
           "key": key, "key_encoding": key_encoding, "value": value, "value_encoding": value_encoding,
           "headers": _headers(record)}
    if record.decoded:
        row["decoded"] = record.decoded
    if record.schema:
        row["schema"] = record.schema
    if record.masked:
        row["masked"] = list(record.masked)
    return row


class JsonLines:
    def head(self) -> bytes:
        return b""

    def rows(self, records: Iterable[ExportRecord]) -> bytes:
        return b"".join(json.dumps(json_row(r), ensure_ascii=False).encode("utf-8") + b"\n" for r in records)

    def tail(self) -> bytes:
        return b""


def _cell(text: str | None) -> str:
    return "" if text is None else guard_formula(text)


class Csv:
    """RFC 4180 with every field quoted, so a value's commas, quotes and new lines stay inside its cell. An
    empty cell with an encoding is empty bytes; without one, a null. Headers are a JSON array of
    [name, text, encoding]. A text that a spreadsheet would run as a formula gets a quote mark before it
    (console/csv_cells.py), which the import removes."""

    def _write(self, lines: Iterable[Iterable]) -> bytes:
        buffer = io.StringIO()
        writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
        writer.writerows(lines)
        return buffer.getvalue().encode("utf-8")

    def head(self) -> bytes:
        return self._write([CSV_COLUMNS])

    def _line(self, record: ExportRecord) -> list:
        key, key_encoding = bytes_to_field(record.key)
        value, value_encoding = bytes_to_field(record.value)
        return [guard_formula(record.topic), record.partition, record.offset,
                "" if record.timestamp is None else record.timestamp, record.timestamp_type,
                _cell(key), key_encoding or "", _cell(value), value_encoding or "",
                json.dumps(_headers(record), ensure_ascii=False, separators=(",", ":")),
                _cell(_json_text(record.decoded.get("key"))), _cell(_json_text(record.decoded.get("value"))),
                _cell(",".join(record.masked))]

    def rows(self, records: Iterable[ExportRecord]) -> bytes:
        return self._write(self._line(r) for r in records)

    def tail(self) -> bytes:
        return b""


class Avro:
    """An object container file: the header once, then one block per chunk of rows (no compression, so any
    Avro reader opens it). Keys, values and header values are Avro bytes."""

    def __init__(self) -> None:
        self._buffer = io.BytesIO()
        self._writer = fastavro.write.Writer(self._buffer, AVRO_SCHEMA, codec="null",
                                             metadata={"console.export.version": str(FORMAT_VERSION)})

    def _drain(self) -> bytes:
        data = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        return data

    def head(self) -> bytes:
        return self._drain()

    def rows(self, records: Iterable[ExportRecord]) -> bytes:
        for r in records:
            self._writer.write({
                "topic": r.topic, "partition": r.partition, "offset": r.offset, "timestamp": r.timestamp,
                "timestamp_type": r.timestamp_type, "key": r.key, "value": r.value,
                "headers": [{"name": name, "value": data} for name, data in r.headers],
                "key_decoded": _json_text(r.decoded.get("key")), "value_decoded": _json_text(r.decoded.get("value")),
                "masked": list(r.masked)})
        self._writer.flush()
        return self._drain()

    def tail(self) -> bytes:
        self._writer.flush()
        return self._drain()


def encoder(name: str):
    """A fresh encoder for the format; ValueError (MSG_BAD_FORMAT) for another name."""
    kinds = {"jsonl": JsonLines, "csv": Csv, "avro": Avro}
    if name not in kinds:
        raise ValueError(MSG_BAD_FORMAT.format(name=name))
    return kinds[name]()
