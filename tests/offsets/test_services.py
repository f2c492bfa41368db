"""Offset resets on the real broker: execute, refusals that change nothing, revert, delete."""

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.errors import Conflict, ConsoleError
from gateway.kafka import errors
from gateway.kafka.types import PartitionRef
from offsets import services
from offsets.resets import services as resets
from offsets.resets.preview import reset_preview
from offsets.resets.planning import ALL_TOPICS, ShiftBy, ToEarliest, ToOffset, TopicScope
from offsets.selectors import group_detail, group_rows
from tests.offsets.conftest import wait_for_state

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def actor(operator, local_cluster):
    return Actor(user=operator, source="web", remote_addr="127.0.0.1")


def _committed(group):
    return cluster_admin("local").group_offsets([group])[group]


def test_execute_commits_reads_back_and_audits_before_and_after(actor, seeded):
    group, topic = seeded["group"], seeded["topic"]

    after = resets.group_offsets_reset(actor=actor, cluster="local", group=group, scope=ALL_TOPICS,
                                         strategy=ToEarliest(), reason="replay from start", confirm=group)

    assert _committed(group) == {PartitionRef(topic, 0): 3, PartitionRef(topic, 1): 0}
    assert after == {topic: {"0": 3, "1": 0}}
    intent, outcome = AuditEvent.objects.order_by("seq")
    assert (intent.outcome, outcome.outcome, outcome.target) == ("intent", "success", f"group:{group}")
    assert intent.before == outcome.before == {topic: {"0": 8, "1": 2}}
    assert outcome.after == {topic: {"0": 3, "1": 0}} and outcome.params["strategy"] == "--to-earliest"


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_active_group_is_refused_and_nothing_changes(actor, seeded, live_consumer, protocol):
    group, topic = seeded["group"], seeded["topic"]
    live_consumer(group, topic, protocol)
    wait_for_state(group, {"Stable", "Unknown", "PreparingRebalance", "CompletingRebalance"})

    with pytest.raises(Conflict, match=f"Assignments can only be reset if the group '{group}' is inactive"):
        resets.group_offsets_reset(actor=actor, cluster="local", group=group, scope=ALL_TOPICS,
                                     strategy=ToEarliest(), reason="r", confirm=group)

    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}
    refusal = AuditEvent.objects.get()
    refused_state = refusal.error.split("the current state is ")[1].split(" ")[0]
    assert refusal.outcome == "refused" and refused_state not in ("Empty", "Dead")


def test_offsets_moved_since_the_preview_are_refused(actor, seeded, commit):
    group, topic = seeded["group"], seeded["topic"]
    preview = reset_preview("local", group, ALL_TOPICS, ToEarliest())
    commit(group, {(topic, 0): 12})

    with pytest.raises(Conflict, match="changed since the preview"):
        resets.group_offsets_reset(actor=actor, cluster="local", group=group, scope=ALL_TOPICS,
                                     strategy=ToEarliest(), reason="r", confirm=group,
                                     expected_fingerprint=preview.fingerprint)

    assert _committed(group)[PartitionRef(topic, 0)] == 12
    assert AuditEvent.objects.get().outcome == "refused"


@pytest.mark.parametrize("row", ["intent", "success"])
def test_revert_goes_back_to_the_recorded_before(actor, seeded, row):
    group, topic = seeded["group"], seeded["topic"]
    resets.group_offsets_reset(actor=actor, cluster="local", group=group, scope=[TopicScope(topic, (0,))],
                                 strategy=ToOffset(15), reason="skip poison", confirm=group)
    assert _committed(group)[PartitionRef(topic, 0)] == 15
    event = AuditEvent.objects.get(outcome=row)

    resets.group_offsets_revert(actor=actor, cluster="local", seq=event.seq, reason="undo", confirm=group)

    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}
    revert = AuditEvent.objects.filter(outcome="success").order_by("seq").last()
    assert revert.params["revert_of"] == event.seq and revert.after == {topic: {"0": 8}}


def test_confirmation_reason_unknown_group_and_topic(actor, seeded):
    group, topic = seeded["group"], seeded["topic"]
    common = dict(actor=actor, cluster="local", scope=ALL_TOPICS, strategy=ToEarliest())

    with pytest.raises(ConsoleError, match="Type the group name"):
        resets.group_offsets_reset(group=group, reason="r", confirm="other", **common)
    with pytest.raises(ConsoleError, match="reason is required"):
        resets.group_offsets_reset(group=group, reason=" ", confirm=group, **common)
    with pytest.raises(ConsoleError, match="does not exist"):
        resets.group_offsets_reset(group="no-such-group", reason="r", confirm="no-such-group", **common)
    with pytest.raises(errors.TopicNotFound, match="no-such-topic"):
        resets.group_offsets_reset(actor=actor, cluster="local", group=group, scope=[TopicScope("no-such-topic")],
                                     strategy=ShiftBy(1), reason="r", confirm=group)
    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}
    assert not AuditEvent.objects.exists()


def test_delete_group_refuses_active_and_deletes_empty(seeded, admin, live_consumer, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    actor = Actor(user=admin, source="cli")

    services.group_delete(actor=actor, cluster="local", group=group, confirm=group, reason="retired")

    assert _committed(group) == {}
    assert AuditEvent.objects.get(outcome="success").before == {topic: {"0": 8, "1": 2}}


def test_group_list_and_detail_show_state_members_and_lag(seeded, live_consumer, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    row = next(r for r in group_rows("local") if r.group_id == group)
    assert (row.state, row.members, row.topics, row.lag) == ("Empty", 0, (topic,), (20 - 8) + (5 - 2))

    live_consumer(group, topic, "classic")
    wait_for_state(group, {"Stable"})
    detail = group_detail("local", group)
    assert detail.description.protocol == "classic" and len(detail.description.members) == 1
    assert [(p.ref.partition, p.committed, p.log_end, p.lag) for p in detail.partitions] == [
        (0, 8, 20, 12), (1, 2, 5, 3), (2, None, 0, None)]
    assert all(p.owner for p in detail.partitions)


def test_delete_offsets_for_a_topic_with_preview_and_audit(seeded, admin, local_cluster, topic_factory, commit):
    group, topic = seeded["group"], seeded["topic"]
    other = topic_factory("other")
    commit(group, {(other, 0): 0})
    actor = Actor(user=admin, source="web")

    preview = services.group_offsets_delete_preview(cluster="local", group=group, topic=topic, partitions=[0])
    assert preview == {PartitionRef(topic, 0): 8}

    after = services.group_offsets_delete(actor=actor, cluster="local", group=group, topic=topic, partitions=None,
                                          confirm=group, reason="topic retired")

    assert after == {topic: {"0": None, "1": None}}
    assert _committed(group) == {PartitionRef(other, 0): 0}
    outcome = AuditEvent.objects.get(outcome="success")
    assert outcome.before == {topic: {"0": 8, "1": 2}} and outcome.action == "group.offsets.delete"
    with pytest.raises(ConsoleError, match="has no committed offsets"):
        services.group_offsets_delete_preview(cluster="local", group=group, topic=topic, partitions=None)


def test_delete_offsets_of_a_topic_an_active_group_consumes_is_refused(seeded, admin, live_consumer, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    live_consumer(group, topic)
    wait_for_state(group, {"Stable"})

    with pytest.raises(Conflict, match="Kafka refused some partitions"):
        services.group_offsets_delete(actor=Actor(user=admin, source="web"), cluster="local", group=group,
                                      topic=topic, partitions=None, confirm=group, reason="r")

    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}
    assert AuditEvent.objects.filter(outcome="failure").count() == 1


def test_revert_deletes_the_offsets_of_partitions_that_had_none_before(actor, topic_factory, produce, commit,
                                                                        client_for, operator):
    import uuid


    topic = topic_factory("revert-none", partitions=3)
    produce(topic, [(p, None, b"x", None) for p in range(3)] * 4)
    group = f"revert-none-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 2})  # partitions 1 and 2: no committed offset
    resets.group_offsets_reset(actor=actor, cluster="local", group=group, scope=[TopicScope(topic)],
                                 strategy=ToEarliest(), reason="replay all", confirm=group)
    assert _committed(group) == {PartitionRef(topic, p): 0 for p in range(3)}
    reset = AuditEvent.objects.filter(outcome="success").order_by("seq").last()
    assert reset.before == {topic: {"0": 2, "1": None, "2": None}}

    _, strategy, scope = resets.revert_strategy(reset.seq)
    preview = reset_preview("local", group, scope, strategy)
    rows = {row.ref.partition: row for row in preview.plan.rows}
    assert rows[0].target == 2 and rows[1].deletes and rows[2].deletes
    page = client_for(operator).get(f"/clusters/local/groups/{group}/revert/{reset.seq}/").content.decode()
    assert page.count("offset deleted") >= 2

    resets.group_offsets_revert(actor=actor, cluster="local", seq=reset.seq, reason="undo", confirm=group)

    assert _committed(group) == {PartitionRef(topic, 0): 2}  # exactly what was there before the reset
    revert = AuditEvent.objects.filter(outcome="success").order_by("seq").last()
    assert revert.after == {topic: {"0": 2, "1": None, "2": None}}
    assert revert.params["deletes"] == {topic: {"1": None, "2": None}} and revert.params["revert_of"] == reset.seq
