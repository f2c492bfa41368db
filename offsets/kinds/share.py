"""Share groups (KIP-932), as kafka-share-groups sees them: members and, per partition, a start offset (the first
record not yet delivered and acknowledged) instead of a committed offset. Resets move start offsets."""

from __future__ import annotations

from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from gateway.kafka.types import EARLIEST, LATEST, PartitionRef, ShareGroupDescription
from offsets.kinds.base import DeleteSummary, GroupState, PickerPositions


@dataclass(frozen=True)
class SharePartitionRow:
    ref: PartitionRef
    start_offset: int | None
    lag: int | None
    leader_epoch: int | None
    log_start: int
    log_end: int
    owners: tuple[str, ...]  # client id @ host of the members assigned to it


@dataclass(frozen=True)
class ShareGroupDetail:
    description: ShareGroupDescription
    partitions: list[SharePartitionRow]

    @property
    def total_lag(self) -> int | None:
        lags = [p.lag for p in self.partitions if p.lag is not None]
        return sum(lags) if lags else None


def share_group_detail(cluster: str, group: str) -> ShareGroupDetail:
    admin = cluster_admin(cluster)
    description = admin.describe_share_groups([group])[group]
    offsets = admin.share_group_offsets([group]).get(group, {})
    refs = sorted(offsets)
    ends = admin.list_offsets_many(refs, [EARLIEST, LATEST], strict=False) if refs else {EARLIEST: {}, LATEST: {}}
    owners: dict[PartitionRef, list[str]] = {}
    for member in description.members:
        for ref in member.assignment:
            owners.setdefault(ref, []).append(f"{member.client_id}@{member.host}")
    rows = []
    for ref in refs:
        start, end = ends[EARLIEST].get(ref), ends[LATEST].get(ref)
        info = offsets[ref]
        rows.append(SharePartitionRow(ref=ref, start_offset=info.start_offset, lag=info.lag,
                                      leader_epoch=info.leader_epoch, log_start=start.offset if start else -1,
                                      log_end=end.offset if end else -1, owners=tuple(sorted(owners.get(ref, ())))))
    return ShareGroupDetail(description=description, partitions=rows)


def _starts(cluster: str, group: str) -> dict[PartitionRef, int | None]:
    offsets = cluster_admin(cluster).share_group_offsets([group]).get(group, {})
    return {ref: o.start_offset for ref, o in offsets.items()}


MSG_DELETE_PER_TOPIC = ("{ref}: a share group's start offsets are deleted a whole topic at a time; delete those of "
                        "'{topic}' with `groups delete-offsets` (kafka-share-groups --delete-offsets)")


class ShareKind:
    name = "share"
    label = "share group"
    positions_noun = "offsets"
    strategies = ("to-earliest", "to-latest", "to-datetime")  # what kafka-share-groups --reset-offsets offers
    all_topics_label = "all topics with start offsets"
    positions_label = "Share-partition start offsets"
    semantics = "a share group: kafka-share-groups --reset-offsets semantics, CURRENT is the start offset"
    # Kafka deletes start offsets per topic only: a revert leaves alone a partition that had none before.
    reverts_deletions = False
    creates_group_on_commit = False
    delete_needs_reason = False
    reset_action = "share-group.offsets.reset"
    after_delete = {}
    delete_action = "share-group.delete"
    msg_strategy = ("Share groups reset with --to-earliest, --to-latest or --to-datetime, as kafka-share-groups "
                    "does; {strategy} is for consumer groups.")
    msg_active = ("Share group '{group}' has {members} member(s) (state {state}): Kafka resets start offsets only "
                  "while a share group has none. Stop its consumers first.")
    msg_moved = "The start offsets of '{group}' changed since the preview. Preview again before executing."
    msg_empty_plan = "The plan is empty: no partition in this scope has a start offset to reset."
    msg_not_a_reset = "Audit event #{seq} is not a share-group reset; only those revert here."
    msg_no_before = ("Audit event #{seq} recorded no start offsets before the reset, so there is nothing to go back "
                     "to.")

    def reset_state(self, cluster: str, group: str) -> GroupState:
        description = cluster_admin(cluster).describe_share_groups([group])[group]
        starts = {ref: o for ref, o in _starts(cluster, group).items() if o is not None}
        return GroupState(state=description.state, members=len(description.members), positions=starts,
                          description=description)

    def topics_for_all(self, group: str, state: GroupState) -> list[str] | None:
        return None

    def positions(self, cluster: str, group: str) -> dict[PartitionRef, int]:
        return {ref: o for ref, o in _starts(cluster, group).items() if o is not None}

    def alter(self, cluster: str, group: str, targets: dict[PartitionRef, int]) -> None:
        cluster_admin(cluster).alter_share_group_offsets(group, targets)

    def delete_positions(self, cluster: str, group: str, refs: list[PartitionRef]) -> list[str]:
        """Kafka deletes a share group's start offsets a whole topic at a time (DeleteShareGroupOffsets), never one
        partition: a revert that would leave some partitions without one is refused for each, naming the way."""
        return [MSG_DELETE_PER_TOPIC.format(ref=ref, topic=ref.topic) for ref in refs]

    def detail(self, cluster: str, group: str) -> ShareGroupDetail:
        return share_group_detail(cluster, group)

    def picker(self, cluster: str, group: str) -> PickerPositions:
        detail = share_group_detail(cluster, group)
        assigned = {ref.topic for m in detail.description.members for ref in m.assignment}
        return PickerPositions({p.ref: (p.start_offset, p.lag) for p in detail.partitions}, assigned)

    def positions_before_delete(self, cluster: str, group: str) -> dict[PartitionRef, int | None]:
        return _starts(cluster, group)

    def delete_group(self, cluster: str, group: str) -> None:
        cluster_admin(cluster).delete_share_groups([group])

    def delete_summary(self, cluster: str, group: str) -> DeleteSummary:
        detail = share_group_detail(cluster, group)
        return DeleteSummary(detail.description.state, len(detail.description.members), len(detail.partitions))


SHARE = ShareKind()
