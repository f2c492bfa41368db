"""The export's file formats, pure: whatever text a record holds (quotes, commas, new lines, any Unicode), each
format's reader gives back the same rows, however the rows are split into chunks."""

from __future__ import annotations

import csv
import io
import json

import fastavro
import pytest
from hypothesis import given, settings, strategies as st

from console.csv_cells import guard_formula, unguard_formula
from records.export_formats import CSV_COLUMNS, MSG_BAD_FORMAT, as_text, encoder

texts = st.one_of(st.none(), st.text(max_size=40))
values = st.one_of(texts, st.dictionaries(st.text(max_size=8), st.one_of(st.integers(), st.text(max_size=8)),
                                          max_size=3))
rows = st.lists(st.fixed_dictionaries({
    "topic": st.text(min_size=1, max_size=12), "partition": st.integers(0, 1000), "offset": st.integers(0, 2**62),
    "timestamp": st.one_of(st.none(), st.integers(0, 2**50)), "key": texts, "value": values,
    "headers": st.lists(st.tuples(st.text(max_size=8), texts).map(list), max_size=3)}), max_size=12)


def _write(fmt: str, all_rows: list[dict], cut: int) -> bytes:
    writer = encoder(fmt)
    return writer.head() + writer.rows(all_rows[:cut]) + writer.rows(all_rows[cut:]) + writer.tail()


@settings(max_examples=60, deadline=None)
@given(rows, st.integers(0, 12))
def test_json_lines_round_trip(all_rows, cut):
    data = _write("jsonl", all_rows, cut)
    # JSON lines end at "\n" only: U+2028 and the like inside a string stay part of its line.
    assert [json.loads(line) for line in data.split(b"\n")[:-1]] == all_rows


@settings(max_examples=60, deadline=None)
@given(rows, st.integers(0, 12))
def test_csv_round_trip(all_rows, cut):
    read = list(csv.reader(io.StringIO(_write("csv", all_rows, cut).decode(), newline="")))
    assert tuple(read[0]) == CSV_COLUMNS
    assert len(read) == len(all_rows) + 1
    for line, row in zip(read[1:], all_rows, strict=True):
        assert line[:4] == [guard_formula(row["topic"]), str(row["partition"]), str(row["offset"]),
                            "" if row["timestamp"] is None else str(row["timestamp"])]
        assert line[4] == guard_formula(as_text(row["key"]) or "")
        assert line[5] == guard_formula(as_text(row["value"]) or "")
        assert json.loads(line[6]) == row["headers"]
        # nothing a spreadsheet would run as a formula
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in line)


@settings(max_examples=60, deadline=None)
@given(rows, st.integers(0, 12))
def test_avro_container_round_trip(all_rows, cut):
    read = list(fastavro.reader(io.BytesIO(_write("avro", all_rows, cut))))
    assert [(r["partition"], r["offset"], r["timestamp"], r["key"], r["value"]) for r in read] == [
        (r["partition"], r["offset"], r["timestamp"], as_text(r["key"]), as_text(r["value"])) for r in all_rows]
    assert [[[h["name"], h["value"]] for h in r["headers"]] for r in read] == [r["headers"] for r in all_rows]


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
