"""Pure: bulk group planning, with hostile group ids (any string Kafka accepts)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.kafka.types import GroupDescription, MemberInfo, PartitionRef
from offsets.bulk.planning import MSG_GONE, plan_delete, plan_delete_offsets

ids = st.lists(st.text(min_size=0, max_size=300), min_size=1, max_size=8, unique=True)


def _group(group_id: str, members: int, topic: str = "t") -> GroupDescription:
    member = MemberInfo(member_id="m", client_id="c", host="/h", instance_id=None,
                        assignment=(PartitionRef(topic, 0),))
    return GroupDescription(group_id, "Stable" if members else "Empty", "classic", "range", None,
                            tuple(member for _ in range(members)))


@settings(max_examples=40, deadline=None)
@given(ids)
def test_every_group_is_planned_under_its_own_id(names):
    described = {n: _group(n, i % 3 == 0) for i, n in enumerate(names)}
    committed = {n: {PartitionRef("t", 0): 5} for n in names[1:]}
    plan = plan_delete(names, described, committed)
    assert [c.group for c in plan.changes] == names
    assert {c.group for c in plan.left_alone} == {n for i, n in enumerate(names) if i % 3 == 0}
    assert plan.phrase.startswith(f"delete {len(plan.to_change)} group")


def test_a_gone_group_and_a_group_consuming_the_topic_are_left_alone():
    plan = plan_delete(["gone"], {}, {})
    assert plan.changes[0].refused == MSG_GONE
    described = {"busy": _group("busy", 1), "idle": _group("idle", 0), "other": _group("other", 0)}
    committed = {"busy": {PartitionRef("t", 0): 1}, "idle": {PartitionRef("t", 0): 1, PartitionRef("u", 0): 2},
                 "other": {PartitionRef("u", 0): 2}}
    plan = plan_delete_offsets(["busy", "idle", "other"], described, committed, "t")
    assert [c.group for c in plan.to_change] == ["idle"]
    assert "consume t now" in plan.changes[0].refused and "no committed offsets for t" in plan.changes[2].refused
    assert plan.phrase == "delete offsets of 1 group"
