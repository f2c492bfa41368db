"""Topic and broker services against the real broker: every operation, and bad input that changes nothing."""

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka import errors
from gateway.kafka.types import BROKER, TOPIC
from topics import services

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def actor(admin):
    return Actor(user=admin, source="web", remote_addr="127.0.0.1")


def _configs(topic):
    return cluster_admin("local").describe_configs(TOPIC, [topic])[topic]


def _events():
    return list(AuditEvent.objects.order_by("seq").values_list("action", "outcome", "target"))


def test_create_topic_with_configs_is_audited(actor, local_cluster):
    services.topic_create(actor=actor, cluster="local", name="svc-create-1", partitions=3, replication_factor=1,
                          configs={"retention.ms": "86400000", "cleanup.policy": "compact"}, reason="new service")

    described = cluster_admin("local").describe_topics(["svc-create-1"])["svc-create-1"]
    assert described.partition_count == 3
    assert _configs("svc-create-1")["retention.ms"].value == "86400000"
    assert _events() == [("topic.create", "intent", "topic:svc-create-1"), ("topic.create", "success", "topic:svc-create-1")]


def test_create_existing_topic_is_refused_before_any_audit(actor, topic_factory, local_cluster):
    name = topic_factory()

    with pytest.raises(errors.TopicAlreadyExists, match="already exists"):
        services.topic_create(actor=actor, cluster="local", name=name, partitions=1, replication_factor=1, configs={})
    assert _events() == []


def test_invalid_config_value_gets_the_brokers_message_and_creates_nothing(actor, local_cluster):
    with pytest.raises(errors.InvalidConfig) as caught:
        services.topic_create(actor=actor, cluster="local", name="svc-bad-config", partitions=1, replication_factor=1,
                              configs={"retention.ms": "a week"})

    assert caught.value.message == "Invalid value a week for configuration retention.ms: Not a number of type LONG"
    assert "svc-bad-config" not in {t.name for t in cluster_admin("local").list_topics()}
    assert _events() == []


def test_impossible_replication_factor_is_refused(actor, local_cluster):
    with pytest.raises(errors.InvalidRequest, match="replication factor of 3 cannot be reached"):
        services.topic_create(actor=actor, cluster="local", name="svc-rf", partitions=1, replication_factor=3, configs={})


@pytest.mark.parametrize("name", ["bad name", "a/b", "x" * 250, ".."])
def test_invalid_topic_names_are_refused(actor, local_cluster, name):
    with pytest.raises(ConsoleError, match="Topic names use"):
        services.topic_create(actor=actor, cluster="local", name=name, partitions=1, replication_factor=1, configs={})


def test_alter_configs_sets_and_removes_overrides_with_before_and_after(actor, topic_factory, local_cluster):
    name = topic_factory(configs={"segment.ms": "3600000"})

    services.topic_configs_alter(actor=actor, cluster="local", topic=name, set_values={"retention.ms": "7200000"},
                                 delete=["segment.ms"], reason="tune")

    configs = _configs(name)
    assert (configs["retention.ms"].value, configs["retention.ms"].source) == ("7200000", "topic")
    assert configs["segment.ms"].source != "topic"
    outcome = AuditEvent.objects.get(outcome="success")
    assert outcome.before["segment.ms"] == {"value": "3600000", "source": "topic"}
    assert outcome.after["retention.ms"] == {"value": "7200000", "source": "topic"}


def test_alter_configs_with_a_bad_value_changes_nothing(actor, topic_factory, local_cluster):
    name = topic_factory(configs={"retention.ms": "3600000"})

    with pytest.raises(errors.InvalidConfig, match="cleanup.policy"):
        services.topic_configs_alter(actor=actor, cluster="local", topic=name,
                                     set_values={"retention.ms": "1000", "cleanup.policy": "sometimes"}, delete=[])

    assert _configs(name)["retention.ms"].value == "3600000"
    assert _events() == []


def test_unknown_config_key_is_named_in_the_error(actor, topic_factory, local_cluster):
    name = topic_factory()

    with pytest.raises(errors.InvalidConfig, match="Unknown topic config name: retention.mss"):
        services.topic_configs_alter(actor=actor, cluster="local", topic=name, set_values={"retention.mss": "1"},
                                     delete=[])


def test_add_partitions_and_refuse_fewer(actor, topic_factory, local_cluster):
    name = topic_factory(partitions=2)

    services.topic_partitions_add(actor=actor, cluster="local", topic=name, new_total=4, reason="scale")
    with pytest.raises(errors.InvalidRequest, match="would not be an increase"):
        services.topic_partitions_add(actor=actor, cluster="local", topic=name, new_total=3)

    assert cluster_admin("local").describe_topics([name])[name].partition_count == 4
    outcome = AuditEvent.objects.get(outcome="success")
    assert (outcome.before, outcome.after) == ({"partitions": 2}, {"partitions": 4})


def test_delete_topic_needs_the_typed_name(actor, topic_factory, local_cluster):
    name = topic_factory()

    with pytest.raises(ConsoleError, match="Type the topic name"):
        services.topic_delete(actor=actor, cluster="local", topic=name, confirm=name + "x")
    assert name in {t.name for t in cluster_admin("local").list_topics()}

    services.topic_delete(actor=actor, cluster="local", topic=name, confirm=name, reason="cleanup")
    assert _events()[-1] == ("topic.delete", "success", f"topic:{name}")


def test_unknown_topic_is_named(actor, local_cluster):
    with pytest.raises(errors.TopicNotFound, match="Topic 'no-such-topic' does not exist on cluster 'local'"):
        services.topic_delete(actor=actor, cluster="local", topic="no-such-topic", confirm="no-such-topic")
    with pytest.raises(errors.TopicNotFound, match="no-such-topic"):
        services.topic_configs_alter(actor=actor, cluster="local", topic="no-such-topic", set_values={"retention.ms": "1"},
                                     delete=[])
    assert _events() == []


def test_purge_previews_then_deletes_records_below_the_offset(actor, topic_factory, produce, local_cluster):
    name = topic_factory(partitions=2)
    produce(name, [(p, b"k", b"v%d" % i, None) for p in (0, 1) for i in range(10)])

    preview = services.topic_purge_preview(cluster="local", topic=name, partitions=[0], before=4)
    assert [(r.partition, r.target, r.records_deleted) for r in preview] == [(0, 4, 4)]
    everything = services.topic_purge_preview(cluster="local", topic=name)
    assert [(r.partition, r.target, r.records_deleted) for r in everything] == [(0, 10, 10), (1, 10, 10)]

    services.topic_records_purge(actor=actor, cluster="local", topic=name, partitions=[0], before=4, reason="poison")
    services.topic_records_purge(actor=actor, cluster="local", topic=name, partitions=[1], reason="all of it")
    first, second = AuditEvent.objects.filter(outcome="success").order_by("seq")
    assert (first.before, first.after) == ({"0": 0}, {"0": 4})
    assert (second.before, second.after) == ({"1": 0}, {"1": 10})
    with pytest.raises(ConsoleError, match="has no partition 7"):
        services.topic_purge_preview(cluster="local", topic=name, partitions=[7])
    with pytest.raises(ConsoleError, match="Nothing to purge"):
        services.topic_records_purge(actor=actor, cluster="local", topic=name, partitions=[1], reason="again")


def test_broker_dynamic_config_change_and_read_only_refusal(actor, local_cluster):
    services.broker_configs_alter(actor=actor, cluster="local", broker_id=1,
                                  set_values={"log.cleaner.backoff.ms": "20000"}, delete=[], reason="test")
    entries = cluster_admin("local").describe_configs(BROKER, ["1"])["1"]
    assert (entries["log.cleaner.backoff.ms"].value, entries["log.cleaner.backoff.ms"].source) == ("20000", "dynamic-broker")

    services.broker_configs_alter(actor=actor, cluster="local", broker_id=1, set_values={},
                                  delete=["log.cleaner.backoff.ms"], reason="revert")
    with pytest.raises(errors.InvalidRequest, match=r"Cannot update these configs dynamically: \[node.id\]"):
        services.broker_configs_alter(actor=actor, cluster="local", broker_id=1, set_values={"node.id": "7"}, delete=[])
    assert cluster_admin("local").describe_configs(BROKER, ["1"])["1"]["node.id"].value == "1"
