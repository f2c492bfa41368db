"""When a consumer-protocol epoch settles (offsets/history/timeline.py): the assignment epoch record opens it, and it
settles at the record of the last member to report that epoch with nothing to revoke or wait for; a member that
leaves is no longer waited for; classic generations never settle here (Kafka writes nothing when they begin)."""

from __future__ import annotations

from offsets.history.records import (ClassicGroup, ClassicMember, GroupEpoch, MemberMetadata, MemberPartitions,
                                     TargetAssignmentEpoch)
from offsets.history.timeline import Settled, Snapshot, apply_record

T1 = "topic-id-1"
STABLE, UNREVOKED = 0, 1


def _apply(states: dict, record, at: int) -> list:
    return apply_record(record, states, lambda topic_id: "orders", at)


def _two_members_at_epoch(states: dict, epoch: int, at: int) -> list:
    out = []
    for record in (GroupEpoch("g", epoch), MemberMetadata("g", "a", None, "app-a", "/h1", ("orders",)),
                   MemberMetadata("g", "b", None, "app-b", "/h2", ("orders",)),
                   MemberPartitions("g", "a", "target", ((T1, 0),)), MemberPartitions("g", "b", "target", ((T1, 1),)),
                   TargetAssignmentEpoch("g", epoch)):
        out += _apply(states, record, at)
    return out


def _current(member: str, epoch: int, state: int = STABLE) -> MemberPartitions:
    return MemberPartitions("g", member, "current", ((T1, 0),), member_epoch=epoch, previous_member_epoch=epoch - 1,
                            state=state)


def test_an_epoch_settles_when_its_last_member_reports_it_stable():
    states: dict = {}
    [snapshot] = _two_members_at_epoch(states, 3, 1_000)
    assert isinstance(snapshot, Snapshot) and snapshot.generation == 3
    assert _apply(states, _current("a", 3), 1_400) == []
    assert _apply(states, _current("b", 3, UNREVOKED), 1_900) == []  # at the epoch, still giving partitions up
    assert _apply(states, _current("b", 2), 2_000) == []  # an older epoch is not this one
    assert _apply(states, _current("b", 3), 2_600) == [Settled("g", "consumer", 3, 2_600)]
    assert _apply(states, _current("a", 3), 3_000) == []  # settled once


def test_a_member_that_leaves_is_no_longer_waited_for():
    states: dict = {}
    _two_members_at_epoch(states, 5, 1_000)
    assert _apply(states, _current("a", 5), 1_200) == []
    assert _apply(states, MemberMetadata("g", "b", tombstone=True), 1_500) == [Settled("g", "consumer", 5, 1_500)]


def test_a_newer_epoch_replaces_the_one_still_settling():
    states: dict = {}
    _two_members_at_epoch(states, 7, 1_000)
    assert _apply(states, _current("a", 7), 1_100) == []
    [snapshot] = _apply(states, TargetAssignmentEpoch("g", 8), 1_300)
    assert snapshot.generation == 8
    assert _apply(states, _current("b", 7), 1_400) == []  # epoch 7 is no longer what they move to
    assert _apply(states, _current("a", 8), 1_500) == []
    assert _apply(states, _current("b", 8), 1_800) == [Settled("g", "consumer", 8, 1_800)]


def test_classic_generations_never_settle():
    member = ClassicMember("m", None, "app", "/h", 10_000, 30_000, (("orders", 0),))
    [snapshot] = _apply({}, ClassicGroup("c", "consumer", 4, "range", "m", 900, (member,)), 1_000)
    assert isinstance(snapshot, Snapshot) and snapshot.protocol == "classic"
