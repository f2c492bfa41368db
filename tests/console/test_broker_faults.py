"""The broker killed (SIGKILL, a real process) right after a change's audit intent is committed: the change fails
with a clear message within seconds, the audit holds the intent and a failed outcome, nothing half-done is
reported as done, and the same change succeeds once the broker is back."""

from __future__ import annotations

import contextlib
import re
import uuid

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from gateway.kafka.errors import ClusterUnavailable
from gateway.kafka.types import PartitionRef
from tests.fixtures.faults import kill_broker, retry_as_a_person_would, start_broker

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.django_db]

# The broker is gone: either the request timed out, or librdkafka's own assertion aborted the cluster's client
# process on the way (see the README's notes on Kafka clients); both are clear, both change nothing.
DOWN = r"did not answer|client process for cluster 'fragile' stopped"


def _kill_after_intent(monkeypatch, module, node) -> None:
    """Wraps the `audited` that `module` calls (a service's own, or console/audit/guarded.py's for the changes that
    go through guarded_change) so the broker dies the moment the intent row is committed."""
    real = module.audited

    @contextlib.contextmanager
    def audited_then_kill(**kwargs):
        with real(**kwargs) as record:
            kill_broker(node)
            yield record

    monkeypatch.setattr(module, "audited", audited_then_kill)


def _fails_after_its_intent(change, action: str) -> None:
    """The change fails with a clear message once its intent is committed (when the broker is killed). Right after
    the broker restart a test before made, librdkafka's own assertion can abort the cluster's client process before
    the intent is written: the same fault a step earlier, nothing written; asked again, as a person would."""
    for _ in range(3):
        with pytest.raises(ClusterUnavailable, match=DOWN) as raised:
            change()
        if AuditEvent.objects.filter(action=action).exists():
            return
        assert "client process" in raised.value.message, raised.value.message
    pytest.fail(f"{action}: the client process kept stopping before the intent was written")


def test_broker_killed_during_a_reset(fragile, operator, monkeypatch):
    from confluent_kafka import Consumer, TopicPartition

    from console.clusters.selectors import cluster_admin
    from console.audit import guarded
    from offsets.resets import services
    from offsets.resets.planning import ToEarliest, TopicScope

    topic, group = f"fault-{uuid.uuid4().hex[:8]}", f"fault-group-{uuid.uuid4().hex[:6]}"
    retry_as_a_person_would(lambda: cluster_admin("fragile").create_topic(topic, partitions=1, replication_factor=1,
                                                                          configs={}))
    consumer = Consumer({"bootstrap.servers": fragile.bootstrap, "group.id": group, "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic, 0, 0)], asynchronous=False)
    consumer.close()
    actor = Actor(user=operator, source="cli")
    arguments = dict(actor=actor, cluster="fragile", group=group, scope=[TopicScope(topic)], strategy=ToEarliest(),
                     reason="fault", confirm=group)

    _kill_after_intent(monkeypatch, guarded, fragile)
    _fails_after_its_intent(lambda: services.group_offsets_reset(**arguments), "group.offsets.reset")
    monkeypatch.undo()

    events = list(AuditEvent.objects.filter(action="group.offsets.reset").order_by("seq"))
    assert [e.outcome for e in events] == ["intent", "failure"]
    assert events[1].correlation_id == events[0].correlation_id and re.search(DOWN, events[1].error)
    assert events[1].after is None  # nothing claimed as done

    start_broker(fragile)
    committed = retry_as_a_person_would(lambda: cluster_admin("fragile").group_offsets([group])[group])
    assert committed == {PartitionRef(topic, 0): 0}
    retry_as_a_person_would(lambda: services.group_offsets_reset(**arguments))
    assert AuditEvent.objects.filter(action="group.offsets.reset", outcome="success").count() == 1


def test_broker_killed_during_a_topic_config_change(fragile, admin, monkeypatch):
    from console.clusters.selectors import cluster_admin
    from topics import services

    topic = f"fault-config-{uuid.uuid4().hex[:8]}"
    retry_as_a_person_would(lambda: cluster_admin("fragile").create_topic(topic, partitions=1, replication_factor=1,
                                                                          configs={}))
    actor = Actor(user=admin, source="cli")
    arguments = dict(actor=actor, cluster="fragile", topic=topic, set_values={"retention.ms": "3600000"}, delete=[],
                     reason="fault")

    _kill_after_intent(monkeypatch, services, fragile)
    _fails_after_its_intent(lambda: services.topic_configs_alter(**arguments), "topic.config.alter")
    monkeypatch.undo()

    events = list(AuditEvent.objects.filter(action="topic.config.alter").order_by("seq"))
    assert [e.outcome for e in events] == ["intent", "failure"] and re.search(DOWN, events[1].error)

    start_broker(fragile)
    configs = retry_as_a_person_would(lambda: cluster_admin("fragile").describe_configs("topic", [topic])[topic])
    assert configs["retention.ms"].source != "topic"
    after = retry_as_a_person_would(lambda: services.topic_configs_alter(**arguments))
    assert after["retention.ms"]["value"] == "3600000"
