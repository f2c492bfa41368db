"""Bulk group actions against the real broker: the same reset for 20 groups previewed, executed through the
single-group reset service and audited, with a group that became active between preview and execute refused and
named; a bulk delete in one DeleteGroups; a bulk delete of one topic's offsets."""

from __future__ import annotations

import html
import re
import time
import uuid

import pytest
from django.urls import reverse

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef
from offsets.bulk.planning import MSG_GONE
from offsets.bulk.services import groups_bulk_execute, groups_bulk_preview
from offsets.resets.planning import ToEarliest, TopicScope
from tests.offsets.conftest import wait_for_state

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def commit_as_admin(outsider, commits: dict) -> None:
    """Admin commits (no member) of each group's TopicPartitions. A commit can be acknowledged with per-partition
    errors (the coordinator still loading on a fresh broker) and then created no group: those are sent again."""
    from confluent_kafka import ConsumerGroupTopicPartitions

    pending = dict(commits)
    for _ in range(30):
        futures = {g: outsider.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(g, partitions)])[g]
                   for g, partitions in pending.items()}
        pending = {g: pending[g] for g, future in futures.items()
                   if any(tp.error for tp in future.result(30).topic_partitions)}
        if not pending:
            return
        time.sleep(0.5)
    raise AssertionError(f"commits of {sorted(pending)} kept failing")


@pytest.fixture
def actor(operator, local_cluster):
    return Actor(user=operator, source="cli")


@pytest.fixture
def groups_on(outsider, topic_factory, produce):
    """count groups with offsets committed (as an admin, no member) on a fresh 2-partition topic of 10 records."""
    from confluent_kafka import TopicPartition

    def make(count: int) -> tuple[str, list[str]]:
        topic = topic_factory("bulkg", partitions=2)
        produce(topic, [(i % 2, None, b"v", None) for i in range(10)])
        prefix = f"bg-{uuid.uuid4().hex[:6]}"
        groups = [f"{prefix}-{i:02d}" for i in range(count)]
        commit_as_admin(outsider, {g: [TopicPartition(topic, 0, 4), TopicPartition(topic, 1, 3)] for g in groups})
        return topic, groups

    return make


def test_the_same_reset_for_20_groups_with_one_group_active_at_execute(actor, groups_on, live_consumer):
    topic, groups = groups_on(20)
    scope, strategy = [TopicScope(topic)], ToEarliest()
    plan = groups_bulk_preview(cluster="local", action="reset", names=groups, scope=scope, strategy=strategy)
    assert len(plan.to_change) == 20 and plan.phrase == "reset 20 groups"
    assert plan.changes[0].summary == f"{topic}: 2 partition(s), re-read 7, skip 0"

    busy = groups[5]
    live_consumer(busy, topic)
    wait_for_state(busy, {"Stable"})
    outcome = groups_bulk_execute(actor=actor, cluster="local", action="reset", names=groups,
                                  confirm="reset 20 groups", reason="replay the day",
                                  scope=scope, strategy=strategy,
                                  fingerprints={c.group: c.fingerprint for c in plan.changes})
    assert list(outcome.failed) == [busy] and "Stable" in outcome.failed[busy]
    assert len(outcome.done) == 19
    committed = cluster_admin("local").group_offsets(groups)
    assert {g: committed[g][PartitionRef(topic, 0)] for g in outcome.done} == {g: 0 for g in outcome.done}
    assert committed[busy][PartitionRef(topic, 0)] == 4

    resets = AuditEvent.objects.filter(action="group.offsets.reset")
    assert resets.filter(outcome="success").count() == 19
    assert resets.get(outcome="refused").target == f"group:{busy}"
    batch = AuditEvent.objects.filter(action="group.bulk.reset").order_by("seq").values_list("outcome", "error")
    assert list(batch) == [("intent", ""), ("failure", f"1 of 20 failed: {busy}")]


def test_bulk_delete_of_groups_and_of_one_topics_offsets(actor, groups_on, outsider):
    topic, groups = groups_on(5)
    plan = groups_bulk_preview(cluster="local", action="delete-offsets", names=groups[:2], topic=topic)
    assert plan.phrase == "delete offsets of 2 groups"
    outcome = groups_bulk_execute(actor=actor, cluster="local", action="delete-offsets", names=groups[:2],
                                  confirm="delete offsets of 2 groups", reason="topic retired", topic=topic)
    assert sorted(outcome.done) == groups[:2]
    assert AuditEvent.objects.filter(action="group.offsets.delete", outcome="success").count() == 2

    plan = groups_bulk_preview(cluster="local", action="delete", names=groups[2:])
    assert plan.phrase == "delete 3 groups"
    gone = groups[4]
    outsider.delete_consumer_groups([gone])[gone].result(30)
    outcome = groups_bulk_execute(actor=actor, cluster="local", action="delete", names=groups[2:],
                                  confirm="delete 3 groups", reason="stale")
    assert sorted(outcome.done) == groups[2:4] and outcome.failed == {gone: MSG_GONE}
    deleted = AuditEvent.objects.filter(action="group.delete", outcome="success")
    assert deleted.count() == 2
    assert deleted.get(target=f"group:{groups[3]}").before == {topic: {"0": 4, "1": 3}}
    assert not {g.group_id for g in cluster_admin("local").list_groups()} & set(groups[2:])


HOSTILE = ['a/b?c#d', '<script>alert("x")</script>', "quote ' and \" both", "ünï cødé 🚀", "..", "%2F~7E", "x" * 300]


def test_hostile_group_ids_go_through_the_bulk_page_whole(admin, client_for, outsider, topic_factory, local_cluster):
    from confluent_kafka import TopicPartition

    topic = topic_factory("bulkh")
    suffix = uuid.uuid4().hex[:6]
    groups = [f"{g}-{suffix}" for g in HOSTILE]
    commit_as_admin(outsider, {group: [TopicPartition(topic, 0, 0)] for group in groups})
    client = client_for(admin)
    preview = client.post(reverse("bulk-groups:preview", args=["local"]), {
        "action": "delete", "group": groups}, HTTP_HX_REQUEST="true")
    text = preview.content.decode()
    assert preview.status_code == 200 and "delete 7 groups" in text and "<script>alert" not in text
    hidden = [html.unescape(v) for v in re.findall(r'name="group" value="([^"]*)"', text)]
    assert hidden == groups
    done = client.post(reverse("bulk-groups:execute", args=["local"]), {
        "action": "delete", "group": hidden, "confirm": "delete 7 groups", "reason": "hostile ids"},
        HTTP_HX_REQUEST="true")
    assert done.status_code == 200 and "Done: 7 groups" in done.content.decode()
    assert set(AuditEvent.objects.filter(action="group.delete", outcome="success").values_list(
        "target", flat=True)) == {f"group:{g}" for g in groups}
