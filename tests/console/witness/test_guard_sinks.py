"""Every sink that writes records refuses the witness topic: a replay into it, a record copied to it, an import
into it. One foreign record there would stop the publisher for good (a foreign tail), so each is refused before
anything is written, audited, and the witness is unchanged."""

from __future__ import annotations

import io
import json

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.witness.guard import MSG_WITNESS_PROTECTED
from console.errors import PermissionRefused
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import LATEST, ClusterConnection, PartitionRef
from records.imports import records_import
from records.services import record_copy
from sparkjobs.services import replay_submit

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def witness_and_source(witness, kafka_node, topic_factory, produce):
    KafkaAdmin(ClusterConnection("setup", kafka_node.bootstrap), timeout=10).create_topic(
        witness.topic, partitions=1, replication_factor=1, configs={})
    source = topic_factory("witness-source", partitions=1)
    produce(source, [(0, b"k", b'{"foreign": true}', None)])
    return witness.topic, source


SINKS = {
    "replay.run": ("replay into", lambda actor, witness, source: replay_submit(
        actor=actor, cluster="local", topic=source, partitions=None, start="earliest", end="latest", sink="topic",
        sink_topic=witness, reason="refill")),
    "record.copy": ("copy records to", lambda actor, witness, source: record_copy(
        actor=actor, cluster="local", topic=source, partition=0, offset=0, target_topic=witness, reason="copy")),
    "records.import": ("import into", lambda actor, witness, source: records_import(
        actor=actor, cluster="local", topic=witness, kind="jsonl", rate=100, reason="load",
        source=io.BytesIO(json.dumps({"value": "forged audit row"}).encode() + b"\n"))),
}


@pytest.mark.parametrize("action", SINKS)
def test_a_sink_into_the_witness_is_refused_and_writes_nothing(action, witness_and_source, admin, kafka_node):
    witness_topic, source = witness_and_source
    what, call = SINKS[action]
    with pytest.raises(PermissionRefused) as refused:
        call(Actor(user=admin, source="cli"), witness_topic, source)
    assert refused.value.message == MSG_WITNESS_PROTECTED.format(topic=witness_topic, cluster="local", what=what)
    row = AuditEvent.objects.get(action=action)
    assert (row.outcome, row.target) == ("refused", f"topic:{witness_topic}")
    ref = PartitionRef(witness_topic, 0)
    assert KafkaAdmin(ClusterConnection("check", kafka_node.bootstrap), timeout=10).list_offsets(
        [ref], LATEST)[ref].offset == 0


SINKS_ELSEWHERE = {
    "replay.run": lambda actor, witness, source, twin: replay_submit(
        actor=actor, cluster="local", topic=source, partitions=None, start="earliest", end="latest", sink="topic",
        sink_topic=witness, sink_cluster=twin, reason="refill"),
    "record.copy": lambda actor, witness, source, twin: record_copy(
        actor=actor, cluster="local", topic=source, partition=0, offset=0, target_topic=witness, target_cluster=twin,
        reason="copy"),
    "records.import": lambda actor, witness, source, twin: records_import(
        actor=actor, cluster=twin, topic=witness, kind="jsonl", rate=100, reason="load",
        source=io.BytesIO(b'{"value": "forged"}\n')),
}


@pytest.mark.parametrize("action", SINKS_ELSEWHERE)
def test_a_second_registration_of_the_witness_brokers_is_refused_too(action, witness_and_source, admin, kafka_node):
    from console.clusters.models import Cluster

    witness_topic, source = witness_and_source
    Cluster.objects.create(name="same-brokers", bootstrap_servers=kafka_node.bootstrap)
    with pytest.raises(PermissionRefused):
        SINKS_ELSEWHERE[action](Actor(user=admin, source="cli"), witness_topic, source, "same-brokers")
    assert AuditEvent.objects.get(action=action).outcome == "refused"
    ref = PartitionRef(witness_topic, 0)
    assert KafkaAdmin(ClusterConnection("check", kafka_node.bootstrap), timeout=10).list_offsets(
        [ref], LATEST)[ref].offset == 0
