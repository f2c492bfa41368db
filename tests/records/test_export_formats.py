"""The export's file formats, pure: whatever bytes a record holds (invalid UTF-8, empty, null, JSON with its own
spacing, text a spreadsheet would run, duplicate headers), each format's file reads back, through the import's
own parser, as the same bytes, partition and timestamp, however the rows are split into chunks."""

from __future__ import annotations

import csv
import io
import json

import fastavro
import pytest
from hypothesis import given, settings, strategies as st

from console.csv_cells import guard_formula, unguard_formula
from records.byte_fields import BASE64, UTF8, FieldRefused, bytes_to_field, field_to_bytes
from records.export_formats import CSV_COLUMNS, MSG_BAD_FORMAT, encoder, json_row
from records.export_rows import ExportRecord
from records.import_parse import BadLine, ImportLine, parse_file, payload_bytes

payloads = st.one_of(
    st.none(), st.binary(max_size=64), st.text(max_size=40).map(str.encode),
    st.sampled_from([b"", b"\xff\xfe", b"\xc3\x28\xa0\xa1", b'{"a": 1,  "b" : [ ]}', b"=cmd|' /C calc'!A0",
                     b"'-5", b"+1", b"line\r\nbreak\x00nul", "é\u2028ü".encode(), b"\xef\xbb\xbf{\"x\": 1}"]))
headers = st.lists(st.tuples(st.sampled_from(["trace", "trace", "bin", "", "ü name", "=x"]), payloads), max_size=4)
records = st.lists(st.builds(
    ExportRecord, topic=st.text(min_size=1, max_size=12), partition=st.integers(0, 1000),
    offset=st.integers(0, 2**62), timestamp=st.one_of(st.none(), st.integers(0, 2**50)),
    timestamp_type=st.sampled_from(["CreateTime", "LogAppendTime"]), key=payloads, value=payloads,
    headers=headers.map(tuple), decoded=st.just({}), schema=st.just({}), masked=st.just(())), max_size=10)


def _write(fmt: str, rows: list[ExportRecord], cut: int) -> bytes:
    writer = encoder(fmt)
    return writer.head() + writer.rows(rows[:cut]) + writer.rows(rows[cut:]) + writer.tail()


def _read_back(fmt: str, data: bytes) -> list[ImportLine]:
    items = list(parse_file(fmt, io.BytesIO(data)))
    assert not [i for i in items if isinstance(i, BadLine)]
    return items


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "avro"])
@settings(max_examples=80, deadline=None)
@given(rows=records, cut=st.integers(0, 10))
def test_every_format_reads_back_as_the_same_bytes(fmt, rows, cut):
    back = _read_back(fmt, _write(fmt, rows, cut))
    assert len(back) == len(rows)
    for line, row in zip(back, rows, strict=True):
        assert payload_bytes(line.key) == row.key and payload_bytes(line.value) == row.value
        assert [(name, payload_bytes(data)) for name, data in line.headers] == list(row.headers)
        assert (line.partition, line.timestamp) == (row.partition, row.timestamp)


def test_the_decoded_form_stands_beside_the_bytes_and_is_never_read_back():
    row = ExportRecord(topic="t", partition=0, offset=1, timestamp=5, timestamp_type="CreateTime",
                       key=b"\x00\x00\x00\x00\x07ord", value=b'{"a":  1}', headers=(("h", b"\xff"),),
                       decoded={"key": {"id": "ord"}, "value": {"a": 1}},
                       schema={"key": {"subject": "t-key", "version": 1, "id": 7, "type": "AVRO"}})
    line = json_row(row)
    assert line["key_encoding"] == BASE64 and line["value"] == '{"a":  1}' and line["value_encoding"] == UTF8
    assert line["headers"] == [["h", "/w==", BASE64]] and line["decoded"]["key"] == {"id": "ord"}
    table = list(csv.DictReader(io.StringIO(_write("csv", [row], 1).decode(), newline="")))
    assert tuple(table[0]) == CSV_COLUMNS and table[0]["value_decoded"] == '{"a":1}'
    avro = next(fastavro.reader(io.BytesIO(_write("avro", [row], 0))))
    assert avro["key"] == row.key and json.loads(avro["key_decoded"]) == {"id": "ord"}
    [back] = _read_back("jsonl", _write("jsonl", [row], 0))
    assert back.key == row.key and back.value == b'{"a":  1}'


def test_csv_tells_an_empty_value_from_a_null_and_guards_formulas():
    rows = [ExportRecord(topic="t", partition=0, offset=o, timestamp=None, timestamp_type="CreateTime", key=k,
                         value=v, headers=()) for o, (k, v) in enumerate([(None, b""), (b"", None), (b"=1+1", b"-5")])]
    data = _write("csv", rows, 1).decode()
    assert '"=1+1"' not in data and "\"'=1+1\"" in data
    back = _read_back("csv", data.encode())
    assert [(b.key, b.value) for b in back] == [(None, b""), (b"", None), (b"=1+1", b"-5")]


def test_byte_fields_refuse_what_no_bytes_stand_for():
    assert bytes_to_field(b"\xff") == ("/w==", BASE64) and bytes_to_field(None) == (None, None)
    with pytest.raises(FieldRefused, match="value is not base64"):
        field_to_bytes("not base64!", BASE64, what="value")
    with pytest.raises(FieldRefused, match="not one of utf8, base64"):
        field_to_bytes("x", "hex", what="key")
    with pytest.raises(FieldRefused, match="is null but says"):
        field_to_bytes(None, UTF8, what="key")
    with pytest.raises(FieldRefused, match="not text"):
        field_to_bytes("\ud800", UTF8, what="key")


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="not an export format"):
        encoder("xlsx")
    assert "jsonl, csv or avro" in MSG_BAD_FORMAT


@given(st.text(max_size=30))
def test_the_formula_guard_is_undone_exactly(text):
    assert unguard_formula(guard_formula(text)) == text
    assert not guard_formula(text).startswith(("=", "+", "-", "@", "\t", "\r"))


def test_formula_cells_are_shown_as_text():
    assert guard_formula('=HYPERLINK("http://x","y")') == '\'=HYPERLINK("http://x","y")'
    assert guard_formula("-5") == "'-5" and guard_formula("'=1") == "''=1" and guard_formula("'plain") == "'plain"
