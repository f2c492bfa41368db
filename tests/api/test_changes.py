"""Change requests through the API: a reset on a protected group answers 202 with the request, the requester's own
approval is refused, another operator's runs it; tokens see only their clusters' requests."""

from __future__ import annotations

import uuid

import pytest

from changes.services import protection_set
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def test_a_reset_on_a_protected_group_is_asked_for_and_approved_by_another(
        api_as, operator, make_user, admin, viewer, local_cluster, topic_factory, produce, commit):
    topic = topic_factory("api-fe", partitions=1)
    produce(topic, [(0, None, b"x", None)] * 6)
    group = f"api-fe-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 5})
    protection_set(actor=Actor(user=admin, source="web"), cluster="local", whole_cluster=True, topic_patterns=[],
                   group_patterns=[], approvals=None, webhook="", reason="prod")
    asker = api_as(operator, role=Role.OPERATOR, name="oncall-bot")
    path = f"/clusters/local/groups/{group}/reset"
    plan = {"scope": {"all_topics": True}, "strategy": {"name": "to-earliest"}}
    preview = asker.post(path + "/preview", plan).json()

    asked = asker.post(path, {**plan, "fingerprint": preview["fingerprint"], "reason": "replay"})

    assert asked.status_code == 202, asked.content
    change = asked.json()
    assert change["status"] == "pending" and change["requested_by"].startswith("otto")
    assert cluster_admin("local").group_offsets([group])[group] == {PartitionRef(topic, 0): 5}
    own = asker.post(f"/changes/{change['id']}/approve", {})
    assert own.status_code == 403 and "your own" in own.json()["detail"]
    assert api_as(viewer).post(f"/changes/{change['id']}/approve", {}).status_code == 403
    assert [c["id"] for c in asker.get("/changes").json()["items"]] == [change["id"]]
    from console.clusters.models import Cluster

    Cluster.objects.create(name="other", bootstrap_servers="127.0.0.1:9")
    elsewhere = api_as(make_user("olga", "operator"), role=Role.OPERATOR, clusters=["other"])
    assert elsewhere.get("/changes").json()["items"] == []

    done = api_as(make_user("omar", "operator"), role=Role.OPERATOR).post(f"/changes/{change['id']}/approve",
                                                                         {"reason": "ok"})

    assert done.status_code == 200 and done.json()["status"] == "executed"
    assert cluster_admin("local").group_offsets([group])[group] == {PartitionRef(topic, 0): 0}
    shown = asker.get(f"/changes/{change['id']}").json()
    assert shown["result"] == [{"topic": topic, "partition": 0, "offset": 0}]
