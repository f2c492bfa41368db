"""Reading import files, pure: records and bad lines by the file's own line numbers, for JSON lines and CSV;
hostile input gives bad lines, never an exception; an export's CSV reads back as its records; Kafka's murmur2."""

from __future__ import annotations

import ctypes
import io
import json

from hypothesis import given, settings, strategies as st

from records.export_formats import encoder
from records.import_parse import BadLine, ImportLine, murmur2, parse, parse_csv, parse_jsonl, partition_for


def _bad(items) -> list[int]:
    return [i.line for i in items if isinstance(i, BadLine)]


def test_json_lines_with_bad_lines_are_numbered():
    text = "\n".join([
        json.dumps({"key": "a", "value": {"n": 1}, "headers": [["h", "1"]], "partition": 2}),
        "",
        "{not json",
        json.dumps({"value": "x", "timestamp": "2026-11-21T03:00:00Z"}),
        json.dumps([1, 2]),
        json.dumps({"key": "no value"}),
        json.dumps({"value": None, "partition": -1}),
        json.dumps({"value": "t", "timestamp": 1700000000000, "headers": {"a": "b"}, "offset": 9, "topic": "x"}),
    ])
    items = list(parse_jsonl(io.StringIO(text)))
    assert _bad(items) == [3, 5, 6, 7]
    good = [i for i in items if isinstance(i, ImportLine)]
    assert [g.line for g in good] == [1, 4, 8]
    assert good[0] == ImportLine(1, "a", {"n": 1}, (("h", "1"),), 2, None)
    assert good[1].timestamp == 1_795_230_000_000 and good[2].headers == (("a", "b"),)


def test_csv_lines_keep_the_files_numbers_across_quoted_new_lines():
    text = ('key,value,partition,timestamp\r\n"k1","one\nand two",0,\r\n"k2","x",zero,\r\n'
            '"k3","y",,not-a-time\r\n"k4",,1,5\r\n"k5","short"\r\n')
    items = list(parse_csv(io.StringIO(text, newline="")))
    assert [(i.line, type(i).__name__) for i in items] == [
        (2, "ImportLine"), (4, "BadLine"), (5, "BadLine"), (6, "ImportLine"), (7, "BadLine")]
    assert items[0].value == "one\nand two" and items[3].value is None and items[3].timestamp == 5
    assert "header row" in list(parse_csv(io.StringIO("key,val\r\n1,2\r\n")))[0].reason


def test_an_exports_csv_imports_as_its_records():
    rows = [{"topic": "t", "partition": 1, "offset": 4, "timestamp": 17, "key": "k,\"q\"", "value": {"a": [1]},
             "headers": [["h", "v\n2"]]},
            {"topic": "t", "partition": 0, "offset": 5, "timestamp": None, "key": None, "value": "plain",
             "headers": []},
            {"topic": "t", "partition": 0, "offset": 6, "timestamp": None, "key": "=cmd|' /C calc'!A0",
             "value": "'-5", "headers": []}]
    writer = encoder("csv")
    data = (writer.head() + writer.rows(rows)).decode()
    items = list(parse("csv", io.StringIO(data, newline="")))
    assert [(i.key, i.value, i.headers, i.partition, i.timestamp) for i in items] == [
        ('k,"q"', '{"a":[1]}', (("h", "v\n2"),), 1, 17), (None, "plain", (), 0, None),
        ("=cmd|' /C calc'!A0", "'-5", (), 0, None)]
    assert "\"'=cmd" in data and "\"''-5\"" in data  # guarded in the file, as a spreadsheet shows text


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["jsonl", "csv"]))
def test_hostile_files_give_records_or_numbered_bad_lines(text, kind):
    count = text.count("\n") + text.count("\r") + 1
    for item in parse(kind, io.StringIO(text, newline="")):
        assert isinstance(item, ImportLine | BadLine) and 1 <= item.line <= count


def test_murmur2_is_kafkas():
    # Kafka's own test vectors (org.apache.kafka.common.utils.UtilsTest), as signed 32-bit ints.
    vectors = {b"21": -973932308, b"foobar": -790332482, b"a-little-bit-long-string": -985981536,
               b"a-little-bit-longer-string": -1486304829, b"abc": 479470107}
    assert {k: ctypes.c_int32(murmur2(k)).value for k in vectors} == vectors
    assert partition_for(None, 3) is None and 0 <= partition_for(b"x", 3) < 3
