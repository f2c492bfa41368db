"""A witness topic of its own for each test, on the session broker's `local` cluster."""

from __future__ import annotations

import json
import time
import uuid

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.services import audit_record
from console.witness.config import WitnessConfig
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import LATEST, STABLE, ClusterConnection, PartitionRef


@pytest.fixture
def witness(settings, local_cluster) -> WitnessConfig:
    settings.AUDIT_WITNESS_ENABLED = True
    settings.AUDIT_WITNESS_CLUSTER = "local"
    settings.AUDIT_WITNESS_TOPIC = f"audit-witness-{uuid.uuid4().hex[:10]}"
    return WitnessConfig(cluster="local", topic=settings.AUDIT_WITNESS_TOPIC)


def append_events(n: int, *, cluster: str = "local") -> list[AuditEvent]:
    return [audit_record(actor=Actor.system(), action="topic.create", outcome="success", cluster=cluster,
                         target=f"topic:t{i}", reason="test", params={"i": i}, after={"partitions": i})
            for i in range(n)]


def read_witness(bootstrap: str, topic: str) -> list[dict]:
    """The topic as a security team's consumer reads it: read_committed, from the beginning, to the end (once the
    last transaction's marker is written: the coordinator writes it just after the commit returns)."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    admin, ref = KafkaAdmin(ClusterConnection("reader", bootstrap), timeout=5.0), PartitionRef(topic, 0)
    deadline = time.monotonic() + 10
    while admin.list_offsets([ref], STABLE)[ref].offset < admin.list_offsets([ref], LATEST)[ref].offset:
        assert time.monotonic() < deadline, "a transaction on the witness topic stayed open"
        time.sleep(0.1)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex}",
                         "isolation.level": "read_committed", "enable.partition.eof": True,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    bodies = []
    try:
        while True:
            message = consumer.poll(10)
            assert message is not None, "the witness topic was not read to its end within 10 s"
            if message.error() is not None:
                assert message.error().code() == KafkaError._PARTITION_EOF, message.error()
                return bodies
            body = json.loads(message.value())
            assert message.key() == str(body["seq"]).encode()
            bodies.append(body)
    finally:
        consumer.close()
