"""The files an export writes, a chunk of records at a time: JSON lines, CSV and Avro object container files.
Pure: rows in (dicts as `messages search --format json` prints them, plus the topic), bytes out, so a file of
any length is written with a bounded number of records in memory."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable

import fastavro

from console.csv_cells import guard_formula

FORMATS = {  # name -> (content type, file extension)
    "jsonl": ("application/x-ndjson", ".jsonl"),
    "csv": ("text/csv; charset=utf-8", ".csv"),
    "avro": ("application/avro", ".avro"),
}
CSV_COLUMNS = ("topic", "partition", "offset", "timestamp", "key", "value", "headers")
MSG_BAD_FORMAT = "'{name}' is not an export format: choose jsonl, csv or avro."

AVRO_SCHEMA = fastavro.parse_schema({
    "type": "record", "name": "ExportedRecord", "namespace": "console.export",
    "doc": "A Kafka record as the console shows it: decoded values as JSON text, other values as text.",
    "fields": [
        {"name": "topic", "type": "string"},
        {"name": "partition", "type": "int"},
        {"name": "offset", "type": "long"},
        {"name": "timestamp", "type": ["null", "long"]},
        {"name": "key", "type": ["null", "string"]},
        {"name": "value", "type": ["null", "string"]},
        {"name": "headers", "type": {"type": "array", "items": {
            "type": "record", "name": "Header",
            "fields": [{"name": "name", "type": "string"}, {"name": "value", "type": ["null", "string"]}]}}},
    ],
})


def as_text(value: object) -> str | None:
    """A key, value or header for a text column: text as it is, decoded JSON as compact JSON, null as None."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class JsonLines:
    def head(self) -> bytes:
        return b""

    def rows(self, rows: Iterable[dict]) -> bytes:
        return b"".join(json.dumps(row, ensure_ascii=False, default=str).encode() + b"\n" for row in rows)

    def tail(self) -> bytes:
        return b""


class Csv:
    """RFC 4180 with every field quoted, so a value's commas, quotes and new lines stay inside its cell;
    headers as a JSON array of [name, value] pairs, which the import reads back. A text that a spreadsheet would
    run as a formula gets a quote mark before it (console/csv_cells.py), which the import removes."""

    def _write(self, lines: Iterable[Iterable]) -> bytes:
        buffer = io.StringIO()
        writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
        writer.writerows(lines)
        return buffer.getvalue().encode("utf-8")

    def head(self) -> bytes:
        return self._write([CSV_COLUMNS])

    def rows(self, rows: Iterable[dict]) -> bytes:
        return self._write(
            [guard_formula(row["topic"]), row["partition"], row["offset"], "" if row["timestamp"] is None else row["timestamp"],
             _csv_cell(row["key"]), _csv_cell(row["value"]),
             json.dumps(row["headers"], ensure_ascii=False, separators=(",", ":"))] for row in rows)

    def tail(self) -> bytes:
        return b""


def _csv_cell(value: object) -> str:
    # An empty cell is a null; an empty string cannot be told from it in CSV, the one loss of this format.
    text = as_text(value)
    return "" if text is None else guard_formula(text)


class Avro:
    """An object container file: the header once, then one block per chunk of rows (no compression, so any
    Avro reader opens it)."""

    def __init__(self) -> None:
        self._buffer = io.BytesIO()
        self._writer = fastavro.write.Writer(self._buffer, AVRO_SCHEMA, codec="null")

    def _drain(self) -> bytes:
        data = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        return data

    def head(self) -> bytes:
        return self._drain()

    def rows(self, rows: Iterable[dict]) -> bytes:
        for row in rows:
            self._writer.write({
                "topic": row["topic"], "partition": row["partition"], "offset": row["offset"],
                "timestamp": row["timestamp"], "key": as_text(row["key"]), "value": as_text(row["value"]),
                "headers": [{"name": name, "value": as_text(value)} for name, value in row["headers"]]})
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
