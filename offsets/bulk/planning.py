"""Pure planning of bulk group actions: from the groups as Kafka describes them now, what each would lose or get,
or why it is left alone. No Django, no Kafka client."""

from __future__ import annotations

from dataclasses import dataclass

from console.bulk import confirmation_phrase
from gateway.kafka.types import GroupDescription, PartitionRef

DELETE, DELETE_OFFSETS, RESET = "delete", "delete-offsets", "reset"
ACTIONS = (DELETE, DELETE_OFFSETS, RESET)
VERBS = {DELETE: "delete", DELETE_OFFSETS: "delete offsets of", RESET: "reset"}

MSG_UNKNOWN_ACTION = "Unknown bulk action {action!r}: choose delete, delete-offsets or reset."
MSG_GONE = "does not exist (no members, no committed offsets)"
MSG_MEMBERS = "has {members} member(s) ({state}): Kafka changes only groups without members"
MSG_CONSUMES = "its members consume {topic} now: Kafka refuses to delete offsets a group is using"
MSG_NO_OFFSETS = "has no committed offsets for {topic}"
MSG_NO_STARTS = "has no start offsets in {topic}"
MSG_STREAMS_OFFSETS = ("a streams group's offsets are deleted with its own tool (kafka-streams-groups "
                       "--delete-offsets), not in bulk")


@dataclass(frozen=True)
class GroupChange:
    group: str
    state: str
    members: int
    summary: str
    refused: str = ""
    fingerprint: str = ""  # a reset's: execute refuses a group whose offsets moved since the preview
    before: dict[PartitionRef, int] | None = None  # committed offsets a delete loses
    kind: str = "consumer"  # the group's type: consumer (classic or consumer protocol), share or streams


@dataclass(frozen=True)
class GroupBulkPlan:
    action: str
    changes: tuple[GroupChange, ...]

    @property
    def to_change(self) -> list[GroupChange]:
        return [c for c in self.changes if not c.refused]

    @property
    def left_alone(self) -> list[GroupChange]:
        return [c for c in self.changes if c.refused]

    @property
    def phrase(self) -> str:
        return confirmation_phrase(VERBS[self.action], len(self.to_change), "group")


def _partitions(offsets: dict[PartitionRef, int]) -> str:
    topics = sorted({ref.topic for ref in offsets})
    return f"{len(offsets)} committed partition(s) of {len(topics)} topic(s)"


def plan_delete(names: list[str], described: dict[str, GroupDescription],
                committed: dict[str, dict[PartitionRef, int]]) -> GroupBulkPlan:
    changes = []
    for name in names:
        group = described.get(name)
        offsets = committed.get(name, {})
        state, members = (group.state, len(group.members)) if group else ("Dead", 0)
        refused = ""
        if members:
            refused = MSG_MEMBERS.format(members=members, state=state)
        elif state == "Dead" and not offsets:
            refused = MSG_GONE
        changes.append(GroupChange(name, state, members, f"delete ({_partitions(offsets)})", refused,
                                   before=offsets))
    return GroupBulkPlan(DELETE, tuple(changes))


def plan_delete_offsets(names: list[str], described: dict[str, GroupDescription],
                        committed: dict[str, dict[PartitionRef, int]], topic: str) -> GroupBulkPlan:
    changes = []
    for name in names:
        group = described.get(name)
        state, members = (group.state, len(group.members)) if group else ("Dead", 0)
        chosen = {ref: o for ref, o in committed.get(name, {}).items() if ref.topic == topic}
        consuming = group is not None and any(ref.topic == topic for m in group.members for ref in m.assignment)
        refused = MSG_NO_OFFSETS.format(topic=topic) if not chosen else (
            MSG_CONSUMES.format(topic=topic) if consuming else "")
        changes.append(GroupChange(name, state, members, f"delete offsets of {topic} on {len(chosen)} partition(s)",
                                   refused, before=chosen))
    return GroupBulkPlan(DELETE_OFFSETS, tuple(changes))
