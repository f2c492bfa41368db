"""Reads for streams groups (KIP-1071): members with their active, standby and warm-up tasks, the topology's
subtopologies, and per partition the committed offset and lag (what `kafka-streams-groups --describe` shows);
and the dry run of a reset (what `kafka-streams-groups --reset-offsets --dry-run` computes)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from console.kafka.ops_offsets import EARLIEST, LATEST
from console.kafka.types import PartitionRef, StreamsGroupDescription
from offsets.resets.planning import AllTopics, FromGroup, Strategy, TopicScope
from offsets.resets.preview import ResetPreview, committed_fingerprint, plan_from_state

MSG_STREAMS_STRATEGY = ("Streams groups reset with the strategies of kafka-streams-groups --reset-offsets; "
                        "copying another group's offsets is for consumer groups.")
MSG_NO_TOPOLOGY = ("Streams group '{group}' has no topology the coordinator knows (no member has joined since it "
                   "was created or its members left long ago), so its input topics are unknown: name them with "
                   "a topic scope.")


@dataclass(frozen=True)
class StreamsPartitionRow:
    ref: PartitionRef
    committed: int | None
    log_start: int
    log_end: int
    owners: tuple[str, ...]  # client id @ host of the members with the active task reading it

    @property
    def lag(self) -> int | None:
        return None if self.committed is None else max(0, self.log_end - self.committed)


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
    rows = [StreamsPartitionRow(ref=ref, committed=committed.get(ref), log_start=ends[EARLIEST][ref].offset,
                                log_end=ends[LATEST][ref].offset, owners=tuple(sorted(owners.get(ref, ()))))
            for ref in refs if ref in ends[EARLIEST] and ref in ends[LATEST]]
    return StreamsGroupDetail(description=description, partitions=rows)


def streams_reset_preview(cluster: str, group: str, scope: AllTopics | Sequence[TopicScope], strategy: Strategy, *,
                          now_ms: int | None = None) -> ResetPreview:
    """The plan `kafka-streams-groups --reset-offsets --dry-run` prints: all input topics (the topology's source
    topics) or the named ones, with kafka-consumer-groups' strategies but from-group."""
    if isinstance(strategy, FromGroup):
        raise ConsoleError(MSG_STREAMS_STRATEGY)
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    admin = cluster_admin(cluster)
    description = admin.describe_streams_groups([group])[group]
    committed = admin.streams_group_offsets([group]).get(group, {})
    if isinstance(scope, AllTopics):
        topics = input_topics(description)
        if not topics and not committed:
            raise ConsoleError(MSG_NO_TOPOLOGY.format(group=group))
        scope = [TopicScope(topic, None) for topic in topics]
    plan = plan_from_state(admin, group, scope, strategy, committed=committed, now_ms=now_ms)
    return ResetPreview(plan=plan, state=description.state, members=len(description.members), committed=committed,
                        fingerprint=committed_fingerprint(committed, [r.ref for r in plan.rows]))
