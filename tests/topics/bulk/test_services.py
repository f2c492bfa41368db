"""Bulk topic actions against the real broker: a delete of 50 topics previewed, confirmed, executed in batched
requests and audited (one event per topic plus the batch), with a topic another client deleted between preview
and execute listed by name; config and partition changes follow the topic policies."""

from __future__ import annotations

import time
import uuid

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.types import TOPIC
from topics.bulk.planning import MSG_MISSING
from topics.bulk.services import topics_bulk_execute, topics_bulk_preview
from topics.policies.rules import parse_config_rule
from topics.policies.services import OVERRIDE_ACTION, topic_policy_save

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def actor(admin, local_cluster):
    return Actor(user=admin, source="web", remote_addr="127.0.0.1")


@pytest.fixture
def many_topics(outsider):
    """Topics made in one CreateTopics request by another client: make(prefix, count, partitions)."""
    from confluent_kafka.admin import NewTopic

    def make(count: int, partitions: int = 1, configs: dict | None = None) -> list[str]:
        prefix = f"bulk{uuid.uuid4().hex[:6]}"
        names = [f"{prefix}-{i:02d}" for i in range(count)]
        futures = outsider.create_topics([NewTopic(n, partitions, 1, config=configs or {}) for n in names],
                                         operation_timeout=20)
        for future in futures.values():
            future.result(30)
        return names

    return make


def _still_listed(names: list[str]) -> set[str]:
    """Brokers learn of deletions from the metadata log a moment after DeleteTopics answers."""
    deadline = time.monotonic() + 15
    while True:
        left = {t.name for t in cluster_admin("local").list_topics()} & set(names)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def test_delete_50_topics_previewed_executed_and_audited_with_one_deleted_meanwhile(actor, many_topics, outsider):
    names = many_topics(50)
    plan = topics_bulk_preview(cluster="local", action="delete", names=names)
    assert len(plan.to_change) == 50 and plan.phrase == "delete 50 topics"
    assert plan.changes[0].summary == "delete (1 partitions, replication factor 1)"

    with pytest.raises(ConsoleError, match="Type 'delete 50 topics' exactly"):
        topics_bulk_execute(actor=actor, cluster="local", action="delete", names=names, confirm="delete 50",
                            reason="cleanup")
    assert not AuditEvent.objects.filter(action__startswith="topic.bulk").exists()

    gone = names[7]
    outsider.delete_topics([gone], operation_timeout=20)[gone].result(30)
    outcome = topics_bulk_execute(actor=actor, cluster="local", action="delete", names=names,
                                  confirm="delete 50 topics", reason="stale topics of the old pipeline")
    # The topic may already be gone from the metadata the re-check reads (left alone: refused) or not yet (then
    # DeleteTopics itself answers that it does not exist): either way it is the one failure, named.
    assert list(outcome.failed) == [gone] and sorted(outcome.done) == sorted(set(names) - {gone})
    assert outcome.failed[gone] in (MSG_MISSING, f"Topic '{gone}' does not exist on cluster 'local'.")
    assert not _still_listed(names)

    batch = list(AuditEvent.objects.filter(action="topic.bulk.delete").order_by("seq")
                 .values_list("outcome", "error"))
    assert batch == [("intent", ""), ("failure", f"1 of 50 failed: {gone}")]
    per_topic = AuditEvent.objects.filter(action="topic.delete")
    assert per_topic.filter(outcome="success").count() == 49
    failed = per_topic.get(outcome__in=["refused", "failure"])
    assert failed.target == f"topic:{gone}" and failed.params["batch"] == outcome.batch_id
    assert per_topic.filter(outcome="success").first().before["partitions"] == 1


def test_bulk_config_and_partition_changes_follow_the_policies(actor, many_topics):
    names = many_topics(4, partitions=2, configs={"retention.ms": "600000"})
    prefix = names[0].rsplit("-", 1)[0]
    topic_policy_save(actor=actor, cluster="local", name="bounded", reason="r", values={
        "applies_to": f"^{prefix}-0[0-2]$", "max_partitions": 3, "partitions_message": "three partitions at most",
        "config_rules": [parse_config_rule("retention.ms <= 3600000: an hour at most")]})

    plan = topics_bulk_preview(cluster="local", action="config", names=names, set_values={"retention.ms": "7200000"},
                               delete=[])
    assert [c.topic for c in plan.to_change] == [names[3]]
    assert "an hour at most" in plan.changes[0].refused
    assert plan.changes[3].summary == "retention.ms: 600000 (topic) → 7200000 (topic)"

    bad = topics_bulk_preview(cluster="local", action="config", names=names, set_values={"retention.ms": "later"},
                              delete=[])
    assert not bad.to_change and "later" in bad.changes[0].refused  # the broker's own message, per topic

    outcome = topics_bulk_execute(actor=actor, cluster="local", action="config", names=names[:2] + [names[3]],
                                  confirm="reconfigure 3 topics", reason="longer",
                                  set_values={"retention.ms": "1800000"},
                                  delete=[])
    assert sorted(outcome.done) == sorted(names[:2] + [names[3]]) and outcome.failed == {}
    configs = cluster_admin("local").describe_configs(TOPIC, names, skip_missing=True)
    assert [configs[n]["retention.ms"].value for n in names] == ["1800000", "1800000", "600000", "1800000"]

    grow = topics_bulk_preview(cluster="local", action="partitions", names=names, new_total=4)
    assert [c.topic for c in grow.to_change] == [names[3]]
    assert "three partitions at most" in grow.changes[0].refused
    with_override = topics_bulk_preview(cluster="local", action="partitions", names=names, new_total=4,
                                        policy_override=True)
    assert len(with_override.to_change) == 4
    outcome = topics_bulk_execute(actor=actor, cluster="local", action="partitions", names=names,
                                  confirm="repartition 4 topics", reason="load test", new_total=4,
                                  policy_override=True)
    assert len(outcome.done) == 4
    assert AuditEvent.objects.filter(action=OVERRIDE_ACTION).count() == 3
    assert {t.partition_count for t in cluster_admin("local").describe_topics(names).values()} <= {2, 4}
    cluster_admin("local").delete_topics(names)
