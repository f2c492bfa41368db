"""A reset through the API: previewed, executed with the preview's fingerprint, refused with a stale one (409,
audited, nothing changed), refused without one; and reverted."""

from __future__ import annotations

import uuid

import pytest

from console.accounts.roles import Role
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef
from offsets.kinds.consumer import CONSUMER

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def committed(group: str, topic: str) -> dict[int, int]:
    found = cluster_admin("local").group_offsets([group])[group]
    return {ref.partition: offset for ref, offset in found.items() if ref.topic == topic}


def test_a_stale_fingerprint_is_refused_and_nothing_changes(api_as, operator, local_cluster, topic_factory, produce,
                                                             commit):
    topic = topic_factory("api-reset", partitions=2)
    produce(topic, [(0, None, b"x", None)] * 10 + [(1, None, b"x", None)] * 4)
    group = f"api-reset-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 8, (topic, 1): 4})
    api = api_as(operator, role=Role.OPERATOR, name="oncall-bot")
    path = f"/clusters/local/groups/{group}/reset"
    plan = {"scope": {"all_topics": True}, "strategy": {"name": "to-offset", "value": "2"}}
    preview = api.post(path + "/preview", plan).json()
    assert [(p["partition"], p["target"]) for p in preview["partitions"]] == [(0, 2), (1, 2)]

    commit(group, {(topic, 0): 9, (topic, 1): 4})  # the group moved on after the preview
    stale = api.post(path, {**plan, "fingerprint": preview["fingerprint"], "reason": "rewind"})
    assert stale.status_code == 409 and stale["Content-Type"] == "application/problem+json"
    assert stale.json()["detail"] == CONSUMER.msg_moved.format(group=group)
    assert committed(group, topic) == {0: 9, 1: 4}
    refusal = AuditEvent.objects.get(action=CONSUMER.reset_action, outcome="refused")
    assert refusal.source == "api" and refusal.params["token"]["name"] == "oncall-bot"

    missing = api.post(path, {**plan, "reason": "rewind"})
    assert missing.status_code == 400 and [e["field"] for e in missing.json()["errors"]] == ["fingerprint"]
    assert committed(group, topic) == {0: 9, 1: 4}

    fresh = api.post(path + "/preview", plan).json()
    done = api.post(path, {**plan, "fingerprint": fresh["fingerprint"], "reason": "rewind"})
    assert done.status_code == 200 and done.json() == [{"topic": topic, "partition": 0, "offset": 2},
                                                       {"topic": topic, "partition": 1, "offset": 2}]
    assert committed(group, topic) == {0: 2, 1: 2}
    reset = AuditEvent.objects.get(action=CONSUMER.reset_action, outcome="success")
    assert reset.before == {topic: {"0": 9, "1": 4}} and reset.actor_id == operator.pk

    back = {"strategy": {"name": "revert", "value": str(reset.seq)}}
    undo = api.post(path + "/preview", back).json()
    assert [(p["partition"], p["target"]) for p in undo["partitions"]] == [(0, 9), (1, 4)]
    api.post(path, {**back, "fingerprint": undo["fingerprint"], "reason": "undo"})
    assert committed(group, topic) == {0: 9, 1: 4}


def test_a_viewer_previews_and_is_refused_the_execution(api_as, viewer, local_cluster, topic_factory, commit):
    topic = topic_factory("api-view")
    group = f"api-view-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 0})
    api = api_as(viewer)
    plan = {"scope": {"topics": [topic]}, "strategy": {"name": "to-latest"}}
    preview = api.post(f"/clusters/local/groups/{group}/reset/preview", plan).json()
    refused = api.post(f"/clusters/local/groups/{group}/reset", {**plan, "fingerprint": preview["fingerprint"],
                                                                  "reason": "x"})
    assert refused.status_code == 403 and "operator" in refused.json()["detail"]
    assert cluster_admin("local").group_offsets([group])[group] == {PartitionRef(topic, 0): 0}
