"""Protobuf messages as typed rows (the shape of a Protobuf topic's typed Parquet): column types, values, the
registry's wire-format header (against confluent-kafka's own framing) and descriptors that travel to executors."""

import datetime
import decimal

from confluent_kafka.schema_registry.common.protobuf import _init_pool
from confluent_kafka.schema_registry.common.serde import SchemaId
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message_factory import GetMessageClass
from hypothesis import given
from hypothesis import strategies as st

from gateway.kafka.schema_registry import _compile_proto
from sparkjobs.jobs import protobuf_rows

SCHEMA = """
syntax = "proto3";
package shop.v1;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";

message Refund {
  enum Reason { UNKNOWN = 0; DAMAGED = 1; LATE = 2; }
  message Line { string sku = 1; int32 quantity = 2; }
  string id = 1;
  int64 cents = 2;
  uint64 big = 3;
  uint32 small = 4;
  sint32 delta = 5;
  double rate = 6;
  float ratio = 7;
  bool urgent = 8;
  bytes blob = 9;
  Reason reason = 10;
  repeated Line lines = 11;
  map<string, Line> by_sku = 12;
  google.protobuf.Timestamp at = 13;
  google.protobuf.StringValue note = 14;
  optional int32 attempts = 15;
  Node tree = 16;
  Empty marker = 17;
  google.protobuf.Struct extra = 18;
  repeated string tags = 19;
  oneof target { string account = 20; int64 card = 21; }
}
message Node { string name = 1; Node child = 2; }
message Empty {}
"""
# Version 2 drops `tags` and adds a field: a record written with version 1 still parses, by field number.
SCHEMA_V2 = """
syntax = "proto3";
package shop.v1;
message Refund { string id = 1; int64 cents = 2; string channel = 22; }
"""


def _descriptor(text: str = SCHEMA, name: str = "shop.v1.Refund"):
    pool = DescriptorPool()
    _init_pool(pool)
    _compile_proto(text, {}, pool)
    return pool.FindMessageTypeByName(name)


REFUND = _descriptor()
Refund = GetMessageClass(REFUND)


def test_column_type_follows_the_descriptor():
    assert protobuf_rows.column_type(REFUND) == (
        "struct<`id`:string,`cents`:bigint,`big`:decimal(20,0),`small`:bigint,`delta`:int,`rate`:double,"
        "`ratio`:float,`urgent`:boolean,`blob`:binary,`reason`:string,"
        "`lines`:array<struct<`sku`:string,`quantity`:int>>,"
        "`by_sku`:map<string,struct<`sku`:string,`quantity`:int>>,`at`:timestamp,`note`:string,`attempts`:int,"
        # A message that contains itself has no finite type: from the second level it is JSON text.
        "`tree`:struct<`name`:string,`child`:string>,`marker`:boolean,`extra`:string,`tags`:array<string>,"
        "`account`:string,`card`:bigint>")


def test_a_full_message_becomes_its_row():
    message = Refund(id="r1", cents=-5, big=2**64 - 1, small=2**32 - 1, delta=-3, rate=0.5, ratio=0.25,
                     urgent=True, blob=b"\x00\xff", reason=Refund.LATE, lines=[Refund.Line(sku="A", quantity=2)],
                     note={"value": "late"}, attempts=0, card=42, tags=["x", "y"])
    message.by_sku["A"].quantity = 2
    message.at.FromDatetime(datetime.datetime(2026, 11, 24, 3, 0, 1, 250000))
    message.tree.name, message.tree.child.name, message.tree.child.child.name = "root", "leaf", "deeper"
    message.marker.SetInParent()
    message.extra.update({"source": "ops", "n": 1})
    row = protobuf_rows.to_row(Refund.FromString(message.SerializeToString()))
    assert row == {
        "id": "r1", "cents": -5, "big": decimal.Decimal(2**64 - 1), "small": 2**32 - 1, "delta": -3, "rate": 0.5,
        "ratio": 0.25, "urgent": True, "blob": b"\x00\xff", "reason": "LATE",
        "lines": [{"sku": "A", "quantity": 2}], "by_sku": {"A": {"sku": "", "quantity": 2}},
        "at": datetime.datetime(2026, 11, 24, 3, 0, 1, 250000, tzinfo=datetime.UTC), "note": "late",
        "attempts": 0, "tree": {"name": "root", "child": '{"child":{"name":"deeper"},"name":"leaf"}'},
        "marker": True, "extra": '{"n":1.0,"source":"ops"}', "tags": ["x", "y"], "account": None, "card": 42}


def test_unset_fields_are_defaults_without_presence_and_null_with_it():
    row = protobuf_rows.to_row(Refund.FromString(b""))
    assert row["id"] == "" and row["cents"] == 0 and row["reason"] == "UNKNOWN" and row["urgent"] is False
    assert row["lines"] == [] and row["by_sku"] == {} and row["tags"] == []
    # Messages, wrappers, `optional` and oneof members have presence: unset is not the same as zero.
    assert all(row[name] is None for name in ("at", "note", "attempts", "tree", "marker", "extra", "account",
                                              "card"))


def test_an_enum_number_the_schema_does_not_know_stays_its_number():
    assert protobuf_rows.to_row(Refund.FromString(bytes([0x50, 0x07])))["reason"] == "7"  # field 10, varint 7


def test_an_older_record_parses_with_the_newer_reader_by_field_number():
    v2 = GetMessageClass(_descriptor(SCHEMA_V2))
    old = Refund(id="r1", cents=9, tags=["dropped in v2"]).SerializeToString()
    assert protobuf_rows.to_row(v2.FromString(old)) == {"id": "r1", "cents": 9, "channel": ""}


def test_descriptors_travel_as_bytes_and_rebuild_the_same_message():
    files = tuple(protobuf_rows.serialized_files(REFUND.file))
    assert all(isinstance(f, bytes) for f in files)  # plain bytes: they pickle into Spark's tasks
    assert len(files) == 4  # timestamp, wrappers and struct first, the schema's own file last
    rebuilt = protobuf_rows.message_class(files, "shop.v1.Refund")
    assert rebuilt is protobuf_rows.message_class(files, "shop.v1.Refund")  # built once per worker
    data = Refund(id="r2", lines=[Refund.Line(sku="B")], at={"seconds": 5}).SerializeToString()
    assert protobuf_rows.to_row(rebuilt.FromString(data)) == protobuf_rows.to_row(Refund.FromString(data))


@given(st.integers(0, 2**31 - 1), st.lists(st.integers(0, 1000), min_size=1, max_size=5),
       st.binary(max_size=20))
def test_the_wire_header_reads_what_confluent_kafka_frames(schema_id, indexes, payload):
    framed = SchemaId("PROTOBUF", schema_id, message_indexes=indexes).id_to_bytes() + payload
    assert protobuf_rows.wire_header(framed) == (schema_id, tuple(indexes), len(framed) - len(payload))


@given(st.binary(max_size=12))
def test_bytes_that_are_not_framed_give_no_header(data):
    found = protobuf_rows.wire_header(data)
    assert found is None or (data[0] == 0 and len(data) >= 6 and found[2] <= len(data))


@given(st.text(), st.integers(-2**63, 2**63 - 1), st.integers(0, 2**64 - 1), st.binary(), st.lists(st.text()))
def test_scalars_come_back_as_written(text, signed, unsigned, blob, tags):
    data = Refund(id=text, cents=signed, big=unsigned, blob=blob, tags=tags).SerializeToString()
    row = protobuf_rows.to_row(Refund.FromString(data))
    assert (row["id"], row["cents"], row["big"], row["blob"], row["tags"]) == (
        text, signed, decimal.Decimal(unsigned), blob, tags)
