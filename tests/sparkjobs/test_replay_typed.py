"""Typed Parquet: a topic of Avro values in the registry's wire format replays to Parquet columns of the Avro
types (Spark's from_avro with the registry's schemas), not to opaque bytes."""

import json

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from console.audit.actor import Actor
from records.services import Payload, record_produce
from sparkjobs.services import replay_submit
from tests.sparkjobs.conftest import wait_finished

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.django_db(transaction=True)]

V1 = {"type": "record", "name": "Refund", "fields": [
    {"name": "id", "type": "string"}, {"name": "country", "type": "string"}, {"name": "cents", "type": "long"}]}
# The next version adds a field with a default: records written with V1 resolve to it.
V2 = {**V1, "fields": [*V1["fields"], {"name": "note", "type": ["null", "string"], "default": None}]}


def test_avro_values_become_typed_parquet_columns(replay_env, registry_cluster, schema_registry, topic_factory,
                                                  make_user, produce, spark_session):
    topic = topic_factory("replay-typed", partitions=2)
    registry = SchemaRegistryClient({"url": schema_registry.url})
    actor = Actor(user=make_user("typed-replayer", "operator"), source="cli")

    def send(value: dict, version: int) -> None:
        record_produce(actor=actor, cluster="local", topic=topic, key=Payload(value["id"]),
                       value=Payload(json.dumps(value), subject=f"{topic}-value", version=version), reason="seed")

    v1 = registry.register_schema(f"{topic}-value", Schema(json.dumps(V1), "AVRO"))
    for i in range(3):
        send({"id": f"r{i}", "country": "NO", "cents": 100 * i}, 1)
    v2 = registry.register_schema(f"{topic}-value", Schema(json.dumps(V2), "AVRO"))
    send({"id": "r3", "country": "SE", "cents": 7, "note": "late"}, 2)
    produce(topic, [(0, b"plain", b"not avro", None)])

    job = wait_finished(replay_submit(actor=actor, cluster="local", topic=topic, partitions=None, start="earliest",
                                      end="latest", sink="parquet", reason="typed replay"))

    assert job.state == "succeeded", job.error
    assert (job.records_read, job.records_written) == (5, 5)
    frame = spark_session.read.parquet(job.output_dir)
    types = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
    assert types["value"] == "struct<id:string,country:string,cents:bigint,note:string>"
    assert types["value_schema_id"] == "int" and types["value_bytes"] == "binary"
    rows = {bytes(r.key): r for r in frame.collect()}
    assert rows[b"r1"].value.asDict() == {"id": "r1", "country": "NO", "cents": 100, "note": None}
    assert rows[b"r3"].value.asDict() == {"id": "r3", "country": "SE", "cents": 7, "note": "late"}
    assert {k: r.value_schema_id for k, r in rows.items()} == {b"r0": v1, b"r1": v1, b"r2": v1, b"r3": v2,
                                                               b"plain": None}
    assert all(r.value_bytes is None for k, r in rows.items() if k != b"plain")
    # Not in the wire format: kept as it was, nothing lost.
    assert rows[b"plain"].value is None and bytes(rows[b"plain"].value_bytes) == b"not avro"


PROTO_V1 = """syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message Refund {
  string id = 1;
  int64 cents = 2;
  google.protobuf.Timestamp at = 3;
  repeated Line lines = 4;
  optional string note = 5;
}
message Line { string sku = 1; int32 quantity = 2; }
message Audit { string who = 1; }
"""
# Version 2 adds a field; records written with version 1 read it as proto3's default, as a Protobuf consumer does.
PROTO_V2 = PROTO_V1.replace("  optional string note = 5;\n", "  optional string note = 5;\n  string channel = 6;\n")


def test_protobuf_values_become_typed_parquet_columns(replay_env, registry_cluster, schema_registry, topic_factory,
                                                      make_user, produce, spark_session):
    from confluent_kafka.schema_registry.common.serde import SchemaId
    from google.protobuf.message_factory import GetMessageClass

    from gateway.kafka.schema_registry import registry_codec
    from gateway.kafka.types import ClusterConnection

    topic = topic_factory("replay-typed-proto", partitions=2)
    registry = SchemaRegistryClient({"url": schema_registry.url})
    actor = Actor(user=make_user("proto-replayer", "operator"), source="cli")

    def send(value: dict, version: int) -> None:
        record_produce(actor=actor, cluster="local", topic=topic, key=Payload(value["id"]),
                       value=Payload(json.dumps(value), subject=f"{topic}-value", version=version), reason="seed")

    v1 = registry.register_schema(f"{topic}-value", Schema(PROTO_V1, "PROTOBUF"))
    send({"id": "r0", "cents": "100", "at": "2026-11-24T03:00:00.250Z", "lines": [{"sku": "A", "quantity": 2}]}, 1)
    send({"id": "r1", "cents": "-7", "note": "late"}, 1)
    v2 = registry.register_schema(f"{topic}-value", Schema(PROTO_V2, "PROTOBUF"))
    send({"id": "r2", "cents": "5", "channel": "web"}, 2)
    # Another message type of the same schema (message index 2): not the reader's type, so it keeps its bytes.
    codec = registry_codec(ClusterConnection("t", "", registry_url=schema_registry.url), timeout=10)
    audit = GetMessageClass(codec.protobuf_descriptor(v2, [2]))(who="ada").SerializeToString()
    other = SchemaId("PROTOBUF", v2, message_indexes=[2]).id_to_bytes() + audit
    produce(topic, [(0, b"audit", other, None), (1, b"plain", b"not protobuf", None)])

    job = wait_finished(replay_submit(actor=actor, cluster="local", topic=topic, partitions=None, start="earliest",
                                      end="latest", sink="parquet", reason="typed protobuf replay"))

    assert job.state == "succeeded", job.error
    assert (job.records_read, job.records_written) == (5, 5)
    frame = spark_session.read.parquet(job.output_dir)
    types = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
    assert types["value"] == ("struct<id:string,cents:bigint,at:timestamp,"
                              "lines:array<struct<sku:string,quantity:int>>,note:string,channel:string>")
    rows = {bytes(r.key): r for r in frame.collect()}
    at = rows[b"r0"].value.at
    assert (at.year, at.month, at.day, at.microsecond) == (2026, 11, 24, 250000)
    assert rows[b"r0"].value.asDict(recursive=True) == {
        "id": "r0", "cents": 100, "at": at, "lines": [{"sku": "A", "quantity": 2}], "note": None, "channel": ""}
    assert rows[b"r1"].value.asDict(recursive=True) == {
        "id": "r1", "cents": -7, "at": None, "lines": [], "note": "late", "channel": ""}
    assert rows[b"r2"].value.channel == "web"
    assert {k: r.value_schema_id for k, r in rows.items()} == {b"r0": v1, b"r1": v1, b"r2": v2, b"audit": v2,
                                                               b"plain": None}
    assert all(r.value_bytes is None for k, r in rows.items() if k not in (b"audit", b"plain"))
    assert rows[b"audit"].value is None and bytes(rows[b"audit"].value_bytes) == other
    assert rows[b"plain"].value is None and bytes(rows[b"plain"].value_bytes) == b"not protobuf"
