"""Reading import files, pure: records and bad lines by the file's own line numbers, for JSON lines and CSV;
hostile input gives bad lines, never an exception; an export's CSV reads back as its records; Kafka's murmur2."""

from __future__ import annotations

import ctypes
import io
import json

from hypothesis import given, settings, strategies as st

from records.import_parse import (
    MSG_NOT_UTF8, BadLine, ImportLine, kind_of_file, murmur2, parse, parse_csv, parse_file, parse_jsonl,
    partition_for,
)


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


def test_files_of_the_first_export_format_still_import_as_text():
    # Version 1 exports: text and JSON values, headers as [name, value] with JSON headers as objects.
    data = ('topic,partition,offset,timestamp,key,value,headers\r\n'
            '"t","1","4","17","k,""q""","{""a"":[1]}","[[""h"",""v\\n2""],[""trace"",{""span"":1}]]"\r\n'
            '"t","0","5","","","plain","[]"\r\n'
            '"t","0","6","","\'=cmd|\' /C calc\'!A0","\'\'-5","[]"\r\n')
    items = list(parse("csv", io.StringIO(data, newline="")))
    assert [(i.key, i.value, i.headers, i.partition, i.timestamp) for i in items] == [
        ('k,"q"', '{"a":[1]}', (("h", "v\n2"), ("trace", '{"span":1}')), 1, 17), (None, "plain", (), 0, None),
        ("=cmd|' /C calc'!A0", "'-5", (), 0, None)]


def test_bytes_that_are_not_utf8_make_a_bad_line_not_a_changed_record():
    data = b'{"value": "ok"}\n{"value": "caf\xe9"}\nkey,value\n'
    items = list(parse_file("jsonl", io.BytesIO(data)))
    assert isinstance(items[0], ImportLine) and items[0].value == "ok"
    assert isinstance(items[1], BadLine) and items[1].line == 2 and items[1].reason == MSG_NOT_UTF8
    csv_items = list(parse_file("csv", io.BytesIO(b'value\r\n"caf\xe9"\r\n"fine"\r\n')))
    assert [(type(i).__name__, i.line) for i in csv_items] == [("BadLine", 2), ("ImportLine", 3)]


def test_encoded_fields_are_bytes_and_a_bad_encoding_is_a_bad_line():
    lines = [json.dumps({"key": "/w==", "key_encoding": "base64", "value": "", "value_encoding": "utf8",
                         "headers": [["a", "AA==", "base64"], ["a", None, None], ["b", "x"]]}),
             json.dumps({"value": "%%", "value_encoding": "base64"}),
             json.dumps({"value": "x", "value_encoding": "rot13"}),
             json.dumps({"value": None, "value_encoding": None, "key": None, "key_encoding": None})]
    items = list(parse_jsonl(io.StringIO("\n".join(lines))))
    assert items[0] == ImportLine(1, b"\xff", b"", (("a", b"\x00"), ("a", None), ("b", "x")), None, None)
    assert "value is not base64" in items[1].reason and "not one of utf8, base64" in items[2].reason
    assert items[3] == ImportLine(4, None, None)


def test_a_file_that_is_not_avro_is_one_bad_line():
    items = list(parse_file("avro", io.BytesIO(b"Obj\x01 not really")))
    assert len(items) == 1 and isinstance(items[0], BadLine) and "not an Avro object container" in items[0].reason
    assert kind_of_file("x.AVRO") == "avro" and kind_of_file("x.csv") == "csv" and kind_of_file("x") == "jsonl"


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
