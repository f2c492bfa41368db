"""Consumer groups (classic protocol or KIP-848's consumer protocol), as kafka-consumer-groups sees them."""

from __future__ import annotations

from django.conf import settings

from console.clusters.selectors import cluster_admin, cluster_connection, cluster_get
from console.errors import Conflict, ConsoleError, NotFound
from gateway.kafka.java.tools import delete_group_offsets
from gateway.kafka.types import PartitionRef
from offsets import selectors
from offsets.kinds.base import DeleteSummary, GroupState, PickerPositions
from offsets.selectors_describe import group_report

MSG_GROUP_ACTIVE = ("Assignments can only be reset if the group '{group}' is inactive, but the current state is "
                    "{state} ({members} member(s)). Stop its consumers first.")
MSG_UNKNOWN_GROUP_RESET = ("Consumer group '{group}' does not exist on cluster '{cluster}' (no members, no committed "
                           "offsets). Check the name; the console does not create groups by resetting them.")
MSG_GROUP_NOT_FOUND = "Consumer group '{group}' does not exist on cluster '{cluster}'."


def delete_offsets(cluster: str, group: str, refs: list[PartitionRef]) -> list[str]:
    """OffsetDelete through Kafka's own tool, one run per topic (confluent-kafka lacks the call)."""
    by_topic: dict[str, list[int]] = {}
    for ref in refs:
        by_topic.setdefault(ref.topic, []).append(ref.partition)
    failed = []
    for topic, partitions in sorted(by_topic.items()):
        rows = delete_group_offsets(cluster_connection(cluster_get(cluster)), group, topic, sorted(partitions),
                                    timeout=settings.KAFKA_REQUEST_TIMEOUT_S + 7)
        failed += [f"{r.ref or r.topic}: {r.error}" for r in rows if r.error]
    return failed


class ConsumerKind:
    name = "consumer"
    label = "group"  # how the shell names one
    positions_noun = "committed offsets"
    strategies = ("to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration",
                  "from-file", "from-group")
    all_topics_label = "all topics with commits"
    positions_label = "Committed offsets"
    semantics = "kafka-consumer-groups --reset-offsets semantics"
    reverts_deletions = True
    creates_group_on_commit = True
    delete_needs_reason = False
    reset_action = "group.offsets.reset"
    after_delete = None  # what group.delete's outcome rows have always recorded
    delete_action = "group.delete"
    msg_strategy = "Consumer groups reset with the strategies of kafka-consumer-groups; {strategy} is not one."
    msg_active = MSG_GROUP_ACTIVE
    msg_moved = ("The committed offsets of '{group}' changed since the preview (someone committed or reset them). "
                 "Preview again before executing.")
    msg_empty_plan = "The plan is empty: no partition in this scope has anything to reset."
    msg_not_a_reset = "Audit event #{seq} is not an offset reset; only resets can be reverted."
    msg_no_before = "Audit event #{seq} recorded no offsets before the reset, so there is nothing to go back to."

    def reset_state(self, cluster: str, group: str) -> GroupState:
        admin = cluster_admin(cluster)
        description = admin.describe_groups([group])[group]
        committed = admin.group_offsets([group])[group]
        if description.state == "Dead" and not committed:
            raise ConsoleError(MSG_UNKNOWN_GROUP_RESET.format(group=group, cluster=cluster))
        return GroupState(state=description.state, members=len(description.members), positions=committed,
                          description=description)

    def topics_for_all(self, group: str, state: GroupState) -> list[str] | None:
        return None

    def positions(self, cluster: str, group: str) -> dict[PartitionRef, int]:
        return cluster_admin(cluster).group_offsets([group])[group]

    def alter(self, cluster: str, group: str, targets: dict[PartitionRef, int]) -> None:
        cluster_admin(cluster).alter_group_offsets(group, targets)

    def delete_positions(self, cluster: str, group: str, refs: list[PartitionRef]) -> list[str]:
        return delete_offsets(cluster, group, refs)

    def detail(self, cluster: str, group: str) -> selectors.GroupDetail:
        return selectors.group_detail(cluster, group)

    def picker(self, cluster: str, group: str) -> PickerPositions:
        detail = selectors.group_detail(cluster, group)
        target = {ref.topic for m in detail.description.members for ref in (m.target_assignment or ())}
        return PickerPositions({p.ref: (p.committed, p.lag) for p in detail.partitions}, target)

    def positions_before_delete(self, cluster: str, group: str) -> dict[PartitionRef, int | None]:
        admin = cluster_admin(cluster)
        description = admin.describe_groups([group])[group]
        committed = admin.group_offsets([group])[group]
        if description.state == "Dead" and not committed:
            raise NotFound(MSG_GROUP_NOT_FOUND.format(group=group, cluster=cluster))
        if not description.inactive:
            raise Conflict(MSG_GROUP_ACTIVE.format(group=group, state=description.state,
                                                   members=len(description.members)))
        return committed

    def delete_group(self, cluster: str, group: str) -> None:
        cluster_admin(cluster).delete_group(group)

    def delete_summary(self, cluster: str, group: str) -> DeleteSummary:
        report = group_report(cluster, group)
        return DeleteSummary(report.description.state, len(report.description.members),
                             sum(r.current_offset is not None for r in report.rows))


CONSUMER = ConsumerKind()
