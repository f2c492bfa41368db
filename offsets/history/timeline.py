"""Rebalance history, pure: decoded `__consumer_offsets` records → generation snapshots → a timeline.

Classic groups write one GroupMetadata record per completed generation, so each is a snapshot. KIP-848 groups
spread the same facts over several records (group epoch, member metadata, target assignment per member, and the
assignment epoch last), so their state is accumulated and a snapshot is taken when an assignment epoch is
written, or when the last member leaves. Each member then writes its current assignment as it reconciles; when the
last member of an epoch reports that epoch with nothing left to revoke or to wait for, the epoch has settled, and its
time from the assignment epoch record is how long the rebalance took. A classic group's record is written once its
members have synced, and nothing is written when its rebalance begins, so classic rebalances have no duration here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from offsets.history.records import ClassicGroup, GroupEpoch, MemberMetadata, MemberPartitions, TargetAssignmentEpoch

BURST_WINDOW_S = 60
BURST_SIZE = 3


@dataclass(frozen=True)
class Snapshot:
    group: str
    protocol: str
    generation: int
    time_ms: int
    members: list[dict]
    assignor: str = ""
    leader: str = ""


@dataclass(frozen=True)
class Settled:
    """The consumer-protocol assignment epoch `generation` of `group` reached by every member at `time_ms`."""

    group: str
    protocol: str
    generation: int
    time_ms: int


MEMBER_STABLE = 0  # ConsumerGroupCurrentMemberAssignmentValue.State: reconciled, nothing to revoke or wait for


def _settled(group: str, state: dict, protocol: str, time_ms: int) -> list[Settled]:
    """The pending epoch as settled, if every member now reports it stable."""
    pending = state.get("pending")
    if pending is None or not state["members"]:
        return []
    current = state.get("current", {})
    if any(current.get(m, (-1, -1))[0] < pending or current.get(m, (-1, -1))[1] != MEMBER_STABLE
           for m in state["members"]):
        return []
    state["pending"] = None
    return [Settled(group, protocol, pending, time_ms)]


def _member(member_id: str, client_id: str, host: str, instance_id: str | None, assignment) -> dict:
    return {"member_id": member_id, "client_id": client_id, "host": host, "instance_id": instance_id,
            "assignment": [list(pair) for pair in sorted(assignment)]}


def apply_record(record, states: dict[str, dict], topic_name: Callable[[str], str],
                 time_ms: int) -> list[Snapshot | Settled]:
    """Updates `states` (consumer-protocol groups, JSON-safe) and returns the snapshots this record completes, and
    the epoch it settles, if any."""
    if isinstance(record, ClassicGroup):
        if record.tombstone or record.generation is None:
            return []
        if record.generation == 0 and not record.members:
            return []  # written when the coordinator creates the group: no rebalance has happened yet
        members = [_member(m.member_id, m.client_id, m.host, m.instance_id, m.assignment) for m in record.members]
        return [Snapshot(record.group, "classic", record.generation, time_ms, members, record.protocol or "",
                         record.leader or "")]
    if not isinstance(record, GroupEpoch | MemberMetadata | MemberPartitions | TargetAssignmentEpoch):
        return []
    state = states.setdefault(record.group, {"epoch": None, "members": {}, "target": {}, "last_size": 0})
    if isinstance(record, GroupEpoch | TargetAssignmentEpoch):
        state["protocol"] = record.protocol  # consumer or share: the same records, other record types
    protocol = state.get("protocol", "consumer")
    if isinstance(record, GroupEpoch):
        if record.epoch is None:  # the group was deleted
            states.pop(record.group, None)
            return []
        state["epoch"] = record.epoch
        if not state["members"] and state["last_size"]:
            state["last_size"] = 0
            return [Snapshot(record.group, protocol, record.epoch, time_ms, [])]
        return []
    if isinstance(record, MemberMetadata):
        if record.tombstone:
            state["members"].pop(record.member_id, None)
            state.setdefault("current", {}).pop(record.member_id, None)
            return _settled(record.group, state, protocol, time_ms)  # the member it waited for has left
        state["members"][record.member_id] = {"client_id": record.client_id, "host": record.host,
                                              "instance_id": record.instance_id}
        return []
    if isinstance(record, MemberPartitions):
        if record.kind == "target":
            if record.tombstone:
                state["target"].pop(record.member_id, None)
            else:
                state["target"][record.member_id] = [list(pair) for pair in record.partitions]
            return []
        current = state.setdefault("current", {})
        if record.tombstone or record.member_epoch is None:
            current.pop(record.member_id, None)
            return []
        current[record.member_id] = [record.member_epoch, record.state]
        return _settled(record.group, state, protocol, time_ms)
    if record.epoch is None:
        return []
    members = []
    for member_id, info in sorted(state["members"].items()):
        assignment = [(topic_name(topic_id), p) for topic_id, p in state["target"].get(member_id, [])]
        members.append(_member(member_id, info["client_id"], info["host"], info["instance_id"], assignment))
    state["last_size"] = len(members)
    state["pending"] = record.epoch if members else None
    return [Snapshot(record.group, protocol, record.epoch, time_ms, members),
            *_settled(record.group, state, protocol, time_ms)]


@dataclass(frozen=True)
class TimelineEntry:
    generation: int
    protocol: str
    time_ms: int
    members: list[dict]
    joined: list[dict] = field(default_factory=list)
    left: list[dict] = field(default_factory=list)
    moved: list[dict] = field(default_factory=list)  # {"topic", "partition", "from", "to"}
    since_previous_s: float | None = None
    burst: bool = False
    sampled: bool = False
    settle_s: float | None = None  # consumer and share epochs: until every member reported it reconciled


def _who(member: dict) -> dict:
    return {"member_id": member["member_id"], "client_id": member["client_id"], "host": member["host"],
            "instance_id": member.get("instance_id")}


def _owners(members: list[dict]) -> dict[tuple[str, int], str]:
    return {(t, p): f"{m['client_id']}@{m['host']}" for m in members for t, p in m["assignment"]}


def timeline(generations: list[dict]) -> list[TimelineEntry]:
    """Oldest first: for each generation, who joined and left since the previous one and which partitions moved.

    `generations` are dicts with generation, protocol, time_ms, members, sampled and settled_ms (None when not
    seen settling, or classic). Three or more within
    BURST_WINDOW_S seconds are marked as a burst (a rebalance storm)."""
    entries: list[TimelineEntry] = []
    previous: dict | None = None
    times: list[int] = []
    for gen in sorted(generations, key=lambda g: (g["time_ms"], g["generation"])):
        members = gen["members"]
        before = {m["member_id"]: m for m in (previous["members"] if previous else [])}
        now = {m["member_id"]: m for m in members}
        old_owner, new_owner = _owners(list(before.values())), _owners(members)
        moved = [{"topic": t, "partition": p, "from": old_owner.get((t, p)), "to": new_owner.get((t, p))}
                 for (t, p) in sorted(set(old_owner) | set(new_owner))
                 if previous is not None and old_owner.get((t, p)) != new_owner.get((t, p))]
        times.append(gen["time_ms"])
        recent = [t for t in times if gen["time_ms"] - t <= BURST_WINDOW_S * 1000]
        entries.append(TimelineEntry(
            generation=gen["generation"], protocol=gen["protocol"], time_ms=gen["time_ms"], members=members,
            joined=[_who(now[m]) for m in sorted(set(now) - set(before))] if previous else [_who(m) for m in members],
            left=[_who(before[m]) for m in sorted(set(before) - set(now))],
            moved=moved,
            since_previous_s=None if previous is None else (gen["time_ms"] - previous["time_ms"]) / 1000,
            burst=len(recent) >= BURST_SIZE, sampled=gen.get("sampled", False),
            settle_s=None if gen.get("settled_ms") is None else (gen["settled_ms"] - gen["time_ms"]) / 1000,
        ))
        previous = gen
    return entries
