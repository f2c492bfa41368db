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
