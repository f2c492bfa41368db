"""Streams groups (KIP-1071), as kafka-streams-groups sees them: members with their active, standby and warm-up
tasks, the topology's subtopologies, and per partition the committed offset and lag. A reset's --all-topics means
the topology's input topics; internal topics (changelogs, repartition topics) are kept, as the tool keeps them
without --delete-all-internal-topics."""

from __future__ import annotations

from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.types import EARLIEST, LATEST, PartitionRef, StreamsGroupDescription
from offsets.kinds.base import DeleteSummary, GroupState, PickerPositions

MSG_NO_TOPOLOGY = ("Streams group '{group}' has no topology the coordinator knows (no member has joined since it "
                   "was created or its members left long ago), so its input topics are unknown: name them with "
                   "a topic scope.")


@dataclass(frozen=True)
class StreamsPartitionRow:
    ref: PartitionRef
    committed: int | None
    log_start: int | None  # None: the partition's leader did not answer in time; the commit still shows
    log_end: int | None
    owners: tuple[str, ...]  # client id @ host of the members with the active task reading it

    @property
    def lag(self) -> int | None:
        if self.committed is None or self.log_end is None:
            return None
        return max(0, self.log_end - self.committed)


@dataclass(frozen=True)
class StreamsGroupDetail:
    description: StreamsGroupDescription
    partitions: list[StreamsPartitionRow]

    @property
    def total_lag(self) -> int | None:
        lags = [p.lag for p in self.partitions if p.lag is not None]
        return sum(lags) if lags else None


def input_topics(description: StreamsGroupDescription) -> list[str]:
    """The topology's source topics that are not the group's own repartition topics: what the tool's
    --all-input-topics means."""
    internal = {t for s in description.subtopologies for t in s.repartition_source_topics}
    return sorted({t for s in description.subtopologies for t in s.source_topics} - internal)


def _task_owners(description: StreamsGroupDescription) -> dict[PartitionRef, list[str]]:
    """Who reads each partition: an active task (subtopology, partition) reads that partition of every source topic
    of the subtopology, its repartition topics included."""
    topics_of = {s.subtopology_id: set(s.source_topics) | set(s.repartition_source_topics)
                 for s in description.subtopologies}
    owners: dict[PartitionRef, list[str]] = {}
    for member in description.members:
        for subtopology, partitions in member.active_tasks:
            for topic in sorted(topics_of.get(subtopology, ())):
                for partition in partitions:
                    owners.setdefault(PartitionRef(topic, partition), []).append(f"{member.client_id}@{member.host}")
    return owners


def streams_group_detail(cluster: str, group: str) -> StreamsGroupDetail:
    admin = cluster_admin(cluster)
    description = admin.describe_streams_groups([group])[group]
    committed = admin.streams_group_offsets([group]).get(group, {})
    owners = _task_owners(description)
    refs = sorted(set(committed) | set(owners))
    ends = admin.list_offsets_many(refs, [EARLIEST, LATEST], strict=False) if refs else {EARLIEST: {}, LATEST: {}}
    rows = [StreamsPartitionRow(ref=ref, committed=committed.get(ref), log_start=_offset(ends[EARLIEST], ref),
                                log_end=_offset(ends[LATEST], ref), owners=tuple(sorted(owners.get(ref, ()))))
            for ref in refs]
    return StreamsGroupDetail(description=description, partitions=rows)


def _offset(found: dict, ref: PartitionRef) -> int | None:
    return found[ref].offset if ref in found else None


def _committed(cluster: str, group: str) -> dict[PartitionRef, int]:
    return cluster_admin(cluster).streams_group_offsets([group]).get(group, {})


class StreamsKind:
    name = "streams"
    label = "streams group"
    positions_noun = "offsets"
    # kafka-streams-groups --reset-offsets offers kafka-consumer-groups' strategies but copying another group.
    strategies = ("to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration",
                  "from-file")
    all_topics_label = "all input topics of the topology"
    positions_label = "Committed offsets"
    semantics = "a streams group: kafka-streams-groups --reset-offsets semantics; internal topics are kept"
    reverts_deletions = True
    creates_group_on_commit = False
    delete_needs_reason = True
    reset_action = "streams-group.offsets.reset"
    after_delete = {}
    delete_action = "streams-group.delete"
    msg_strategy = ("Streams groups reset with the strategies of kafka-streams-groups --reset-offsets; "
                    "copying another group's offsets is for consumer groups.")
    msg_active = ("Streams group '{group}' has {members} member(s) (state {state}): Kafka resets a streams "
                  "group's offsets only while its application instances are stopped. Stop them first.")
    msg_moved = "The committed offsets of '{group}' changed since the preview. Preview again before executing."
    msg_empty_plan = "The plan is empty: no partition in this scope has anything to reset."
    msg_not_a_reset = "Audit event #{seq} is not a streams-group reset; only those revert here."
    msg_no_before = "Audit event #{seq} recorded no offsets before the reset, so there is nothing to go back to."

    def reset_state(self, cluster: str, group: str) -> GroupState:
        description = cluster_admin(cluster).describe_streams_groups([group])[group]
        committed = _committed(cluster, group)
        return GroupState(state=description.state, members=len(description.members), positions=committed,
                          description=description)

    def topics_for_all(self, group: str, state: GroupState) -> list[str] | None:
        topics = input_topics(state.description)
        if not topics and not state.positions:
            raise ConsoleError(MSG_NO_TOPOLOGY.format(group=group))
        return topics

    def positions(self, cluster: str, group: str) -> dict[PartitionRef, int]:
        return _committed(cluster, group)

    def alter(self, cluster: str, group: str, targets: dict[PartitionRef, int]) -> None:
        cluster_admin(cluster).alter_streams_group_offsets(group, targets)

    def delete_positions(self, cluster: str, group: str, refs: list[PartitionRef]) -> list[str]:
        cluster_admin(cluster).delete_streams_group_offsets(group, refs)
        return []  # the gateway raises what Kafka refused

    def detail(self, cluster: str, group: str) -> StreamsGroupDetail:
        return streams_group_detail(cluster, group)

    def picker(self, cluster: str, group: str) -> PickerPositions:
        detail = streams_group_detail(cluster, group)
        return PickerPositions({p.ref: (p.committed, p.lag) for p in detail.partitions},
                               set(input_topics(detail.description)), others_internal=True)

    def positions_before_delete(self, cluster: str, group: str) -> dict[PartitionRef, int | None]:
        return _committed(cluster, group)

    def delete_group(self, cluster: str, group: str) -> None:
        cluster_admin(cluster).delete_streams_groups([group])

    def delete_summary(self, cluster: str, group: str) -> DeleteSummary:
        detail = streams_group_detail(cluster, group)
        return DeleteSummary(detail.description.state, len(detail.description.members),
                             sum(p.committed is not None for p in detail.partitions))


STREAMS = StreamsKind()
