"""What every kind of group offers the resets, pages and shell above it. Kafka has one tool per group type
(kafka-consumer-groups, kafka-share-groups, kafka-streams-groups) with the same options and different semantics;
a `GroupKind` is those semantics, so the code above runs once over all of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from gateway.kafka.types import PartitionRef


@dataclass(frozen=True)
class GroupState:
    """A group as a reset plans from it: state, member count and its positions (committed offsets, or a share
    group's start offsets). `description` is the kind's own description, for what only that kind reads of it."""

    state: str
    members: int
    positions: dict[PartitionRef, int]
    description: Any


@dataclass(frozen=True)
class PickerPositions:
    """What the reset wizard lists: per partition (position, lag), the topics the group reads beyond those it has
    positions on, and whether topics outside those are the group's own internal topics."""

    positions: dict[PartitionRef, tuple[int | None, int | None]]
    topics: set[str]
    others_internal: bool = False


@dataclass(frozen=True)
class DeleteSummary:
    """What the shell says before deleting a group."""

    state: str
    members: int
    partitions: int


class GroupKind(Protocol):
    name: str  # Kafka's group type as ListGroups names it
    strategies: tuple[str, ...]  # the reset options the kind's tool offers, by their shell names
    all_topics_label: str  # what --all-topics means, for the wizard
    positions_label: str  # what a reset changes, for the shell's output
    semantics: str  # whose --reset-offsets the dry run follows, for the shell's output
    # Whether a None "before" (no position) in an audited reset is deleted again on revert.
    reverts_deletions: bool
    creates_group_on_commit: bool  # committing to a Dead group makes it exist again
    reset_action: str
    delete_action: str
    after_delete: dict | None  # what a group delete's audit outcome row records as "after"
    delete_needs_reason: bool
    label: str  # how the shell names a group of the kind
    positions_noun: str  # what a delete loses, for the shell
    msg_strategy: str  # {strategy}: a strategy the tool does not offer
    msg_active: str  # {group}, {state}, {members}
    msg_moved: str  # {group}
    msg_empty_plan: str
    msg_not_a_reset: str  # {seq}
    msg_no_before: str  # {seq}

    def reset_state(self, cluster: str, group: str) -> GroupState:
        """Describe and positions, read now; refuses a group the kind's tool would not reset."""

    def topics_for_all(self, group: str, state: GroupState) -> list[str] | None:
        """The topics --all-topics covers, or None for every partition the group has a position on."""

    def positions(self, cluster: str, group: str) -> dict[PartitionRef, int]:
        """The positions as Kafka holds them now (read back after a change)."""

    def alter(self, cluster: str, group: str, targets: dict[PartitionRef, int]) -> None:
        """Commits new positions (as admin: the group must have no members)."""

    def delete_positions(self, cluster: str, group: str, refs: list[PartitionRef]) -> list[str]:
        """Deletes positions; returns what Kafka refused, per partition, as text."""

    def detail(self, cluster: str, group: str) -> Any:
        """The group's page: what the kind's tool shows with --describe."""

    def picker(self, cluster: str, group: str) -> PickerPositions:
        """What the reset wizard offers to pick."""

    def positions_before_delete(self, cluster: str, group: str) -> dict[PartitionRef, int | None]:
        """The positions a group delete loses (for the audit); refuses a group that cannot be deleted."""

    def delete_group(self, cluster: str, group: str) -> None:
        """DeleteGroups for the kind."""

    def delete_summary(self, cluster: str, group: str) -> DeleteSummary:
        """State, members and the partitions with a position, before a delete."""
