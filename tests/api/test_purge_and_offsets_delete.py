"""Purging a topic's records and deleting a group's offsets for a topic through the API, on the real broker: the
preview answers what the shell's dry run prints, the execution changes Kafka as it says and is audited, an operator
is refused, and on a protected cluster both answer 202 with a change request and change nothing."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import pytest

from changes.services import protection_set
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.urlnames import escape_name
from gateway.kafka.types import EARLIEST, PartitionRef
from tests.api.conftest import shell_json
from tests.fixtures.share_groups import settled_share_group, twenty_records

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _log_starts(topic: str, partitions: int) -> dict[int, int]:
    refs = [PartitionRef(topic, p) for p in range(partitions)]
    return {ref.partition: o.offset
            for ref, o in cluster_admin("local").list_offsets_many(refs, [EARLIEST])[EARLIEST].items()}


def _protect(admin) -> None:
    protection_set(actor=Actor(user=admin, source="web"), cluster="local", whole_cluster=True, topic_patterns=[],
                   group_patterns=[], approvals=None, webhook="", reason="prod")


def test_a_purge_previews_as_the_shell_runs_and_asks_on_a_protected_cluster(
        api_as, admin, operator, local_cluster, topic_factory, produce):
    topic = topic_factory("api-purge", partitions=2)
    produce(topic, [(0, None, b"a", None)] * 5 + [(1, None, b"b", None)] * 3)
    api = api_as(admin, role=Role.ADMIN)
    path = f"/clusters/local/topics/{topic}/purge"

    preview = api.post(path + "/preview", {"before": 4})
    assert preview.status_code == 200, preview.content
    assert preview.json() == shell_json("topics", "purge", "--topic", topic, "--offset", "4", "--dry-run")
    assert [(r["partition"], r["records_deleted"]) for r in preview.json()] == [(0, 4), (1, 3)]
    unknown = api.post(path + "/preview", {"partitions": [7]})
    assert unknown.status_code == 400 and "7" in unknown.json()["detail"]

    refused = api_as(operator, role=Role.OPERATOR).post(path, {"partitions": [0], "before": 4, "reason": "x"})
    assert refused.status_code == 403 and _log_starts(topic, 2) == {0: 0, 1: 0}

    done = api.post(path, {"partitions": [0], "before": 4, "reason": "bad batch"})
    assert done.status_code == 200, done.content
    assert [(r["partition"], r["target"], r["records_deleted"]) for r in done.json()] == [(0, 4, 4)]
    assert _log_starts(topic, 2) == {0: 4, 1: 0}
    event = AuditEvent.objects.get(action="topic.records.purge", outcome="success", target=f"topic:{topic}")
    assert event.reason == "bad batch"

    _protect(admin)
    asked = api.post(path, {"reason": "empty it"})
    assert asked.status_code == 202, asked.content
    assert asked.json()["status"] == "pending" and asked.json()["action"] == "topic.records.purge"
    assert _log_starts(topic, 2) == {0: 4, 1: 0}


def test_a_groups_offsets_for_one_topic_are_deleted_and_the_others_kept(
        api_as, admin, local_cluster, topic_factory, produce, commit):
    kept, dropped = topic_factory("api-od-kept"), topic_factory("api-od-dropped", partitions=2)
    group = f"api od/#%'<b>ü-{uuid.uuid4().hex[:6]}"
    commit(group, {(kept, 0): 0, (dropped, 0): 0, (dropped, 1): 0})
    api = api_as(admin, role=Role.ADMIN)
    path = f"/clusters/local/groups/{quote(escape_name(group), safe='')}/offsets/delete"

    preview = api.post(path + "/preview", {"topic": dropped})
    assert preview.status_code == 200, preview.content
    assert preview.json() == {"group": group, "partitions": [{"topic": dropped, "partition": 0, "current": 0},
                                                             {"topic": dropped, "partition": 1, "current": 0}]}
    nothing = api.post(path + "/preview", {"topic": "no-such-topic"})
    assert nothing.status_code == 400

    wrong = api.post(path, {"topic": dropped, "confirm": "another", "reason": "moved"})
    assert wrong.status_code == 400 and len(cluster_admin("local").group_offsets([group])[group]) == 3

    done = api.post(path, {"topic": dropped, "confirm": group, "reason": "moved"})
    assert done.status_code == 200, done.content
    assert done.json()["deleted"] == preview.json()["partitions"]
    assert cluster_admin("local").group_offsets([group])[group] == {PartitionRef(kept, 0): 0}
    assert AuditEvent.objects.filter(action="group.offsets.delete", outcome="success", target=f"group:{group}").exists()

    _protect(admin)
    asked = api.post(path, {"topic": kept, "confirm": group, "reason": "retire"})
    assert asked.status_code == 202 and asked.json()["action"] == "group.offsets.delete"
    assert cluster_admin("local").group_offsets([group])[group] == {PartitionRef(kept, 0): 0}


def test_a_share_groups_start_offsets_go_for_a_whole_topic(api_as, admin, kafka_node, local_cluster):
    topic = twenty_records(kafka_node)
    group = settled_share_group(kafka_node, topic)
    api = api_as(admin, role=Role.ADMIN)
    path = f"/clusters/local/groups/{group}/offsets/delete"

    partial = api.post(path + "/preview", {"topic": topic, "partitions": [0]})
    assert partial.status_code == 400 and "whole topic" in partial.json()["detail"]
    preview = api.post(path + "/preview", {"topic": topic}).json()
    starts = cluster_admin("local").share_group_offsets([group])[group]
    assert [(r["partition"], r["current"]) for r in preview["partitions"]] == [
        (p, starts[PartitionRef(topic, p)].start_offset) for p in (0, 1)]

    done = api.post(path, {"topic": topic, "confirm": group, "reason": "rewind the share group"})
    assert done.status_code == 200, done.content
    assert cluster_admin("local").share_group_offsets([group]).get(group, {}) == {}
    assert AuditEvent.objects.filter(action="share-group.offsets.delete", outcome="success").exists()
