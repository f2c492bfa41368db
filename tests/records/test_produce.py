"""Produce and copy on the real broker: the record lands where the audit says, byte for byte; refusals write
nothing."""

from __future__ import annotations

import uuid

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import RegistryError, TopicNotFound
from records.selectors import record_at
from records.services import Payload, record_copy, record_produce

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _log_end(topic: str) -> int:
    from gateway.kafka.types import LATEST
    from gateway.kafka.types import PartitionRef

    admin = cluster_admin("local")
    partitions = admin.describe_topics([topic])[topic].partitions
    found = admin.list_offsets([PartitionRef(topic, p.partition) for p in partitions], LATEST)
    return sum(o.offset for o in found.values())


def test_produce_with_key_hash_headers_and_a_tombstone(operator, topic_factory, local_cluster):
    topic = topic_factory("produce", partitions=3)
    actor = Actor(user=operator, source="web")
    first = record_produce(actor=actor, cluster="local", topic=topic, key=Payload("order-42"),
                           value=Payload('{"amount": 12.5, "note": "naïve <b>"}'),
                           headers=[("trace", "abc"), ("trace", "def")], reason="fix billing")
    again = record_produce(actor=actor, cluster="local", topic=topic, key=Payload("order-42"), value=Payload(None),
                           reason="tombstone")
    assert again.partition == first.partition  # the same key hashes to the same partition
    stored = record_at("local", topic, first.partition, first.offset)
    assert stored.key == b"order-42" and stored.value == '{"amount": 12.5, "note": "naïve <b>"}'.encode()
    assert stored.headers == (("trace", b"abc"), ("trace", b"def"))
    assert record_at("local", topic, again.partition, again.offset).value is None
    success = AuditEvent.objects.filter(action="record.produce", outcome="success").order_by("seq").first()
    assert success.after == {"partition": first.partition, "offset": first.offset}
    assert success.params["value"]["bytes"] == len(stored.value) and "naïve" not in str(success.params)
    pinned = record_produce(actor=actor, cluster="local", topic=topic, key=Payload(None), value=Payload("x"),
                            partition=2, reason="pinned")
    assert pinned.partition == 2


def test_produce_refusals_write_nothing(operator, topic_factory, local_cluster):
    topic = topic_factory("produce-bad", partitions=1)
    actor = Actor(user=operator, source="web")
    missing = f"missing-{uuid.uuid4().hex}"
    with pytest.raises(TopicNotFound):
        record_produce(actor=actor, cluster="local", topic=missing, key=Payload(None), value=Payload("x"))
    assert missing not in {t.name for t in cluster_admin("local").list_topics()}  # no auto-created topic
    with pytest.raises(ConsoleError, match="0 or more"):
        record_produce(actor=actor, cluster="local", topic=topic, key=Payload(None), value=Payload("x"), partition=-1)
    with pytest.raises(ConsoleError, match="has no partition 5 \\(it has 1\\)"):
        record_produce(actor=actor, cluster="local", topic=topic, key=Payload(None), value=Payload("x"), partition=5)
    assert _log_end(topic) == 0
    with pytest.raises(RegistryError, match="no schema registry"):
        record_produce(actor=actor, cluster="local", topic=topic, key=Payload(None),
                       value=Payload("{}", subject="anything-value"))
    assert _log_end(topic) == 0


def test_copy_a_record_byte_for_byte(operator, topic_factory, produce, local_cluster):
    source, target = topic_factory("poison", partitions=2), topic_factory("poison-dlq", partitions=1)
    produce(source, [(1, b"k", b"\x00\x01binary\xff", [("h", b"v"), ("empty", None)])])
    actor = Actor(user=operator, source="web")
    written = record_copy(actor=actor, cluster="local", topic=source, partition=1, offset=0, target_topic=target,
                          reason="park the poison message")
    copied = record_at("local", target, written.partition, written.offset)
    assert (copied.key, copied.value, copied.headers) == (b"k", b"\x00\x01binary\xff", (("h", b"v"), ("empty", None)))
    event = AuditEvent.objects.get(action="record.copy", outcome="success")
    assert event.params["source"] == {"cluster": "local", "topic": source, "partition": 1, "offset": 0}
    assert event.after == {"partition": written.partition, "offset": written.offset}
    with pytest.raises(ConsoleError, match="no record at offset 5"):
        record_copy(actor=actor, cluster="local", topic=source, partition=1, offset=5, target_topic=target)
    with pytest.raises(TopicNotFound):
        record_copy(actor=actor, cluster="local", topic=source, partition=1, offset=0,
                    target_topic=f"missing-{uuid.uuid4().hex}")
    assert AuditEvent.objects.filter(action="record.copy").count() == 2  # intent and success of the first only
