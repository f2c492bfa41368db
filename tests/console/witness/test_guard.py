"""The console's own services refuse to produce to, purge, reconfigure, repartition or delete the witness topic,
from the page and the shell alike, and the refusal is audited; other topics are untouched by the rule."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.utils.html import escape

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.witness.guard import MSG_WITNESS_PROTECTED
from console.errors import PermissionRefused
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import LATEST, ClusterConnection, PartitionRef
from records.services import Payload, record_produce
from topics.services import topic_configs_alter, topic_delete, topic_partitions_add, topic_records_purge

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def witness_topic(witness, kafka_node) -> str:
    KafkaAdmin(ClusterConnection("setup", kafka_node.bootstrap), timeout=10).create_topic(
        witness.topic, partitions=1, replication_factor=1, configs={})
    return witness.topic


def _message(topic: str, what: str) -> str:
    return MSG_WITNESS_PROTECTED.format(topic=topic, cluster="local", what=what)


@pytest.mark.parametrize(("action", "what", "call"), [
    ("record.produce", "produce to", lambda actor, topic: record_produce(
        actor=actor, cluster="local", topic=topic, key=Payload("1"), value=Payload("{}"), reason="r")),
    ("topic.records.purge", "purge", lambda actor, topic: topic_records_purge(
        actor=actor, cluster="local", topic=topic, reason="r")),
    ("topic.config.alter", "reconfigure", lambda actor, topic: topic_configs_alter(
        actor=actor, cluster="local", topic=topic, set_values={"retention.ms": "1000"}, delete=[], reason="r")),
    ("topic.partitions.add", "add partitions to", lambda actor, topic: topic_partitions_add(
        actor=actor, cluster="local", topic=topic, new_total=2, reason="r")),
    ("topic.delete", "delete", lambda actor, topic: topic_delete(
        actor=actor, cluster="local", topic=topic, confirm=topic, reason="r")),
])
def test_each_writing_service_refuses_the_witness_topic_and_audits_the_refusal(witness_topic, admin, kafka_node,
                                                                              action, what, call):
    with pytest.raises(PermissionRefused) as refused:
        call(Actor(user=admin, source="cli"), witness_topic)

    assert refused.value.message == _message(witness_topic, what)
    row = AuditEvent.objects.get(action=action)
    assert (row.outcome, row.target, row.error, row.actor_name) == ("refused", f"topic:{witness_topic}",
                                                                   refused.value.message, "ada")
    described = KafkaAdmin(ClusterConnection("check", kafka_node.bootstrap), timeout=10).describe_topics(
        [witness_topic])[witness_topic]
    assert described.partition_count == 1


def test_the_page_refuses_to_delete_the_witness_topic(witness_topic, admin, client_for, kafka_node):
    response = client_for(admin).post(f"/clusters/local/topics/{witness_topic}/delete/",
                                      {"confirm": witness_topic, "reason": "tidy up"})

    assert response.status_code == 403 and escape(_message(witness_topic, "delete")) in response.content.decode()
    assert AuditEvent.objects.get(action="topic.delete").outcome == "refused"
    KafkaAdmin(ClusterConnection("check", kafka_node.bootstrap), timeout=10).describe_topics([witness_topic])


def test_the_shell_refuses_to_purge_the_witness_topic(witness_topic, admin):
    with pytest.raises(CommandError, match="is the audit witness"):
        call_command("topics", "purge", "--topic", witness_topic, "--actor", admin.username, "--reason", "r")

    assert AuditEvent.objects.get(action="topic.records.purge").outcome == "refused"


def test_another_topic_of_the_witness_cluster_is_not_refused(witness_topic, topic_factory, admin):
    other = topic_factory("plain")

    topic_configs_alter(actor=Actor(user=admin, source="cli"), cluster="local", topic=other,
                        set_values={"retention.ms": "3600000"}, delete=[], reason="r")

    assert AuditEvent.objects.filter(action="topic.config.alter", outcome="success").count() == 1


def test_a_second_registration_of_the_witness_brokers_is_the_witness_cluster(witness_topic, admin, kafka_node):
    from console.clusters.models import Cluster

    Cluster.objects.create(name="twin", bootstrap_servers=kafka_node.bootstrap.replace("127.0.0.1", "localhost"))
    with pytest.raises(PermissionRefused) as refused:
        record_produce(actor=Actor(user=admin, source="cli"), cluster="twin", topic=witness_topic, key=Payload("1"),
                       value=Payload("{}"), reason="r")

    assert refused.value.message == MSG_WITNESS_PROTECTED.format(topic=witness_topic, cluster="twin", what="produce to")
    assert AuditEvent.objects.get(action="record.produce").outcome == "refused"
    end = KafkaAdmin(ClusterConnection("check", kafka_node.bootstrap), timeout=10).list_offsets(
        [PartitionRef(witness_topic, 0)], LATEST)
    assert end[PartitionRef(witness_topic, 0)].offset == 0


def test_the_guard_compares_a_cluster_id_it_is_given(witness_topic, admin, kafka_node):
    from console.witness.guard import witness_topic_guard

    local_id = KafkaAdmin(ClusterConnection("id", kafka_node.bootstrap), timeout=10).describe_cluster().cluster_id
    actor = Actor(user=admin, source="cli")
    witness_topic_guard(actor=actor, action="connector.create", cluster="elsewhere", topic=witness_topic, what="w",
                        cluster_id="an-other-cluster-id")
    with pytest.raises(PermissionRefused):
        witness_topic_guard(actor=actor, action="connector.create", cluster="local", topic=witness_topic, what="w",
                            cluster_id=local_id)
    # Another topic is never asked about: no id, no refusal.
    witness_topic_guard(actor=actor, action="connector.create", cluster="nowhere", topic="plain", what="w")


def test_a_cluster_that_cannot_say_its_id_is_refused_only_the_witness_topic(witness_topic, admin, settings):
    from console.witness.guard import MSG_WITNESS_UNKNOWN, witness_topic_guard
    from console.clusters.models import Cluster

    settings.KAFKA_REQUEST_TIMEOUT_S = 1.0
    Cluster.objects.create(name="down", bootstrap_servers="127.0.0.1:1")
    actor = Actor(user=admin, source="cli")
    with pytest.raises(PermissionRefused) as refused:
        witness_topic_guard(actor=actor, action="record.produce", cluster="down", topic=witness_topic,
                            what="produce to")
    assert refused.value.message.startswith(MSG_WITNESS_UNKNOWN.split("(")[0].format(topic=witness_topic,
                                                                                    cluster="down"))
    witness_topic_guard(actor=actor, action="record.produce", cluster="down", topic="plain", what="produce to")
