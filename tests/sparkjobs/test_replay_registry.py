"""A replay of a topic whose values are Avro through the cluster's schema registry: the filter reads decoded
fields, and the JSON-lines sink holds decoded values with the schema they were read with."""

import json
from pathlib import Path

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from console.audit.actor import Actor
from records.services import Payload, record_produce
from sparkjobs.services import replay_submit
from tests.sparkjobs.conftest import wait_finished

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.django_db(transaction=True)]

AVRO = json.dumps({"type": "record", "name": "Refund", "fields": [
    {"name": "id", "type": "string"}, {"name": "country", "type": "string"}, {"name": "cents", "type": "long"}]})


def test_replay_filters_on_decoded_fields_and_writes_decoded_json_lines(replay_env, registry_cluster, schema_registry,
                                                                         topic_factory, make_user, produce):
    topic = topic_factory("replay-avro", partitions=2)
    schema_id = SchemaRegistryClient({"url": schema_registry.url}).register_schema(f"{topic}-value",
                                                                                   Schema(AVRO, "AVRO"))
    actor = Actor(user=make_user("avro-replayer", "operator"), source="cli")
    for i in range(8):
        record_produce(actor=actor, cluster="local", topic=topic, key=Payload(f"r{i}"),
                       value=Payload(json.dumps({"id": f"r{i}", "country": "NO" if i < 3 else "SE", "cents": i}),
                                     subject=f"{topic}-value"), reason="seed")
    produce(topic, [(0, b"plain", json.dumps({"country": "NO", "id": "plain"}).encode(), None)])

    job = wait_finished(replay_submit(actor=actor, cluster="local", topic=topic, partitions=None, start="earliest",
                                      end="latest", sink="jsonl", reason="decoded replay",
                                      filter_expr="get_json_object(value, '$.country') = 'NO'"))

    assert job.state == "succeeded", job.error
    assert (job.records_read, job.records_written) == (9, 4)
    lines = [json.loads(line) for path in sorted(Path(job.output_dir).glob("part-*"))
             for line in path.read_text().splitlines() if line.strip()]
    plain = [line for line in lines if line["key"] == "plain"]
    by_id = {line["value"]["id"]: line for line in lines if line["key"] != "plain"}
    assert sorted(by_id) == ["r0", "r1", "r2"]
    assert by_id["r1"]["value"] == {"id": "r1", "country": "NO", "cents": 1} and by_id["r1"]["key"] == "r1"
    assert by_id["r1"]["schema"] == {"value": {"subject": f"{topic}-value", "version": 1, "id": schema_id,
                                               "type": "AVRO"}}
    # Not in the registry's wire format: the text, as without a registry, and no schema.
    assert [(p["value"], "schema" in p) for p in plain] == [('{"country": "NO", "id": "plain"}', False)]
