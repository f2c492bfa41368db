"""Share groups (KIP-932) made by Kafka's own VerifiableShareConsumer on the real broker: listed with their type,
described as kafka-share-groups describes them, reset with its dry run's targets, refused while they have
members, audited and reverted."""

from __future__ import annotations

import re
import subprocess
import time
import uuid

import pytest
from django.urls import reverse

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.errors import Conflict, ConsoleError
from offsets.kinds.share import share_group_detail
from offsets.resets.planning import ALL_TOPICS, ShiftBy, ToEarliest, ToLatest, TopicScope
from offsets.resets.preview import reset_preview
from offsets.resets.services import group_offsets_reset, group_offsets_revert
from offsets.selectors import group_snapshot_refresh, groups_of_every_type
from tests.fixtures.share_groups import consume_as_share_group, settled_share_group, twenty_records

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]

SHARE_COMMAND = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"

@pytest.fixture(scope="module")
def _unchanged_share_group(kafka_node, django_db_setup, django_db_blocker):
    # Each group costs Kafka's share consumer about 12 s, so the tests that only read one share it.
    with django_db_blocker.unblock():
        from console.clusters.models import Cluster
        Cluster.objects.update_or_create(name="local", defaults={"bootstrap_servers": kafka_node.bootstrap,
                                                                 "schema_registry_url": ""})
        topic = twenty_records(kafka_node)
        return topic, settled_share_group(kafka_node, topic)


@pytest.fixture
def unchanged_share_group(_unchanged_share_group, local_cluster):
    """A share group (read by these tests, changed by none) that consumed a 2-partition topic, then left."""
    return _unchanged_share_group


@pytest.fixture
def share_group(kafka_node, local_cluster):
    """A share group of its own, for a test that changes it."""
    topic = twenty_records(kafka_node)
    return topic, settled_share_group(kafka_node, topic)


def _tool(kafka_node, *args: str) -> list[list[str]]:
    result = kafka_node.run_tool(SHARE_COMMAND, "--bootstrap-server", kafka_node.bootstrap, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    return [re.split(r"\s+", line.strip()) for line in result.stdout.splitlines() if line.strip()]


def test_listed_with_their_type_and_described_as_the_tool_does(unchanged_share_group, kafka_node):
    topic, group = unchanged_share_group
    listings, problem = groups_of_every_type("local")
    assert problem == "" and {g.group_id: g.group_type for g in listings}[group] == "share"
    detail = share_group_detail("local", group)
    assert detail.description.state == "Empty" and detail.description.members == ()
    rows = _tool(kafka_node, "--describe", "--offsets", "--group", group)
    header, body = rows[0], rows[1:]
    assert header[:3] == ["GROUP", "TOPIC", "PARTITION"]
    kafka = {(r[1], int(r[2])): dict(zip(header, r)) for r in body}
    ours = {(p.ref.topic, p.ref.partition): p for p in detail.partitions}
    assert set(kafka) == set(ours) == {(topic, 0), (topic, 1)}
    for key, row in kafka.items():
        assert str(ours[key].start_offset) == row["START-OFFSET"]
        assert (str(ours[key].lag) if ours[key].lag is not None else "-") == row.get("LAG", "-")


@pytest.mark.parametrize("flag, strategy", [("--to-earliest", ToEarliest()), ("--to-latest", ToLatest())])
def test_dry_run_matches_kafka_share_groups(unchanged_share_group, kafka_node, flag, strategy):
    topic, group = unchanged_share_group
    rows = _tool(kafka_node, "--reset-offsets", "--group", group, "--topic", topic, flag, "--dry-run")
    header, body = rows[0], rows[1:]
    kafka = {(r[1], int(r[2])): int(dict(zip(header, r))["NEW-OFFSET"]) for r in body}
    plan = reset_preview("local", group, [TopicScope(topic)], strategy).plan
    assert {(row.ref.topic, row.ref.partition): row.target for row in plan.rows} == kafka


def test_reset_refused_while_consuming_then_done_audited_and_reverted(share_group, kafka_node, operator, commit,
                                                                     make_user):
    topic, group = share_group
    actor = Actor(user=operator, source="web")
    before = {p.ref: p.start_offset for p in share_group_detail("local", group).partitions}
    with pytest.raises(ConsoleError, match="--to-earliest"):
        reset_preview("local", group, ALL_TOPICS, ShiftBy(-1))
    running = consume_as_share_group(kafka_node, topic, group, 10_000, wait=False)
    try:
        deadline = time.monotonic() + 60
        while not cluster_admin("local").describe_share_groups([group])[group].members:
            assert time.monotonic() < deadline, "the share consumer never joined"
            time.sleep(0.5)
        with pytest.raises(Conflict, match="member"):
            group_offsets_reset(actor=actor, cluster="local", group=group, scope=ALL_TOPICS, strategy=ToEarliest(),
                                reason="while consuming", confirm=group)
    finally:
        # Stopped as an operator stops it: the consumer leaves at once instead of after a 45 s session timeout.
        running.terminate()
        try:
            running.wait(timeout=30)
        except subprocess.TimeoutExpired:
            running.kill()
            running.wait()
    assert AuditEvent.objects.filter(action="share-group.offsets.reset", outcome="refused").exists()
    deadline = time.monotonic() + 60
    while cluster_admin("local").describe_share_groups([group])[group].members:
        assert time.monotonic() < deadline
        time.sleep(0.5)
    before = {p.ref: p.start_offset for p in share_group_detail("local", group).partitions}
    after = group_offsets_reset(actor=actor, cluster="local", group=group, scope=ALL_TOPICS, strategy=ToEarliest(),
                                reason="replay everything", confirm=group)
    assert after == {topic: {"0": 0, "1": 0}}
    assert {p.ref: p.start_offset for p in share_group_detail("local", group).partitions} == {
        ref: 0 for ref in before}
    event = AuditEvent.objects.filter(action="share-group.offsets.reset", outcome="success").last()
    group_offsets_revert(actor=actor, cluster="local", seq=event.seq, reason="undo", confirm=group)
    assert {p.ref: p.start_offset for p in share_group_detail("local", group).partitions} == before

    # In bulk beside a consumer group: each follows its own tool, and both are deleted in one batch.
    from offsets.bulk.planning import DELETE, RESET
    from offsets.bulk.services import groups_bulk_execute, groups_bulk_preview

    consumer = f"bulk-beside-{uuid.uuid4().hex[:6]}"
    commit(consumer, {(topic, 0): 7, (topic, 1): 9})
    names = [group, consumer]
    plan = groups_bulk_preview(cluster="local", action=RESET, names=names, scope=ALL_TOPICS, strategy=ToEarliest())
    assert [(c.group, c.kind, c.refused) for c in plan.changes] == [(group, "share", ""), (consumer, "consumer", "")]
    outcome = groups_bulk_execute(actor=actor, cluster="local", action=RESET, names=names, confirm=plan.phrase,
                                  reason="bulk replay", scope=ALL_TOPICS, strategy=ToEarliest(),
                                  fingerprints={c.group: c.fingerprint for c in plan.changes})
    assert sorted(outcome.done) == sorted(names) and not outcome.failed
    assert {p.start_offset for p in share_group_detail("local", group).partitions} == {0}
    assert set(cluster_admin("local").group_offsets([consumer])[consumer].values()) == {0}
    resets = AuditEvent.objects.filter(reason="bulk replay", outcome="success")
    assert {(e.action, e.target) for e in resets} >= {("share-group.offsets.reset", f"group:{group}"),
                                                      ("group.offsets.reset", f"group:{consumer}")}
    admin_actor = Actor(user=make_user("bulk-admin", "admin"), source="web")
    gone = groups_bulk_preview(cluster="local", action=DELETE, names=names)
    groups_bulk_execute(actor=admin_actor, cluster="local", action=DELETE, names=names, confirm=gone.phrase,
                        reason="retired")
    assert not {group, consumer} & {g.group_id for g in groups_of_every_type("local")[0]}
    assert AuditEvent.objects.filter(action="share-group.delete", outcome="success", target=f"group:{group}").exists()
    assert AuditEvent.objects.filter(action="group.bulk.delete", reason="retired").exists()


def test_pages_and_shell_show_share_groups(unchanged_share_group, client_for, viewer, operator, kafka_node):
    import io
    import json as jsonlib

    from django.core.management import call_command

    topic, group = unchanged_share_group
    group_snapshot_refresh("local", wait_s=30)
    listing = client_for(viewer).get("/clusters/local/groups/", {"type": "share"}).content.decode()
    assert f'data-group="{group}"' in listing and "<td>share</td>" in listing
    detail = client_for(viewer).get(f"/clusters/local/groups/{group}/")
    assert detail.status_code == 200 and "Share group" in detail.content.decode() and topic in detail.content.decode()
    preview = client_for(operator).post(f"/clusters/local/groups/{group}/reset/",
                                        {"scope": "all", "strategy": "to-latest"})
    assert preview.status_code == 200 and "kafka-share-groups" in preview.content.decode()
    out = io.StringIO()
    call_command("groups", "list", "--all-types", "--format", "json", stdout=out)
    assert {"group": group, "state": "Empty", "type": "share"} in jsonlib.loads(out.getvalue())
    out = io.StringIO()
    call_command("reset_offsets", "--group", group, "--all-topics", "--to-latest", stdout=out)
    assert "kafka-share-groups --reset-offsets semantics" in out.getvalue() and "nothing changed" in out.getvalue()


def test_start_offsets_and_the_group_deleted_from_the_page_and_the_shell(share_group, client_for, admin, operator,
                                                                        kafka_node):
    import io

    from django.core.management import call_command
    from django.core.management.base import CommandError

    topic, group = share_group
    assert client_for(operator).post(f"/clusters/local/groups/{group}/start-offsets/delete/",
                                     {"topic": topic, "confirm": group, "reason": "x"}).status_code == 403
    page = client_for(admin).get(f"/clusters/local/groups/{group}/").content.decode()
    assert "Delete start offsets" in page
    done = client_for(admin).post(f"/clusters/local/groups/{group}/start-offsets/delete/",
                                  {"topic": topic, "confirm": group, "reason": "forget the topic"})
    assert done.status_code == 302 and done["Location"] == reverse("offsets:detail", args=["local", group])
    assert share_group_detail("local", group).partitions == []
    assert _tool(kafka_node, "--describe", "--offsets", "--group", group)[1:] == []
    event = AuditEvent.objects.get(action="share-group.offsets.delete", outcome="success", target=f"group:{group}")
    assert set(event.before[topic]) == {"0", "1"}

    with pytest.raises(CommandError, match="whole topic"):
        call_command("groups", "delete-offsets", group, "--topic", f"{topic}:0")
    out = io.StringIO()
    call_command("groups", "delete", group, stdout=out)
    assert "share group" in out.getvalue() and "--yes" in out.getvalue()
    call_command("groups", "delete", group, "--yes", "--actor", admin.username, "--reason", "retired",
                 stdout=io.StringIO())
    assert group not in {g.group_id for g in groups_of_every_type("local")[0]}
    assert AuditEvent.objects.filter(action="share-group.delete", outcome="success", target=f"group:{group}").exists()
