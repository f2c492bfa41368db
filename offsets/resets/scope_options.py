"""What the reset wizard offers to pick: the group's topics with every partition, its committed offset (a share
group's start offset) and lag; and the cluster's other groups to copy offsets from."""

from __future__ import annotations

from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from gateway.kafka.errors import TopicNotFound
from gateway.kafka.types import PartitionRef
from offsets import selectors
from offsets.kinds import GroupKind


@dataclass(frozen=True)
class PartitionOption:
    topic: str
    partition: int
    committed: int | None
    lag: int | None

    @property
    def choice(self) -> str:
        """The checkbox value; safe in HTML and URLs because topic names are [a-zA-Z0-9._-]."""
        return f"{self.topic}:{self.partition}"


@dataclass(frozen=True)
class TopicOption:
    topic: str
    partitions: tuple[PartitionOption, ...]
    exists: bool  # False: the group still has commits on a deleted topic
    internal: bool = False  # a streams application's own topic (repartition): "all topics" leaves it out

    @property
    def lag(self) -> int | None:
        lags = [p.lag for p in self.partitions if p.lag is not None]
        return sum(lags) if lags else None


def _partition_counts(admin, topics: list[str]) -> dict[str, int]:
    try:
        return {name: t.partition_count for name, t in admin.describe_topics(topics).items()}
    except TopicNotFound:  # a topic the group committed on was deleted since: one Metadata request for the rest
        wanted = set(topics)
        return {t.name: t.partition_count for t in admin.list_topics() if t.name in wanted}


def reset_scope_options(cluster: str, group: str, kind: GroupKind) -> list[TopicOption]:
    """Every topic the group has positions on, is assigned or (streams) reads as input, with all its partitions."""
    picker = kind.picker(cluster, group)
    positions, more_topics = picker.positions, picker.topics
    topics = sorted({ref.topic for ref in positions} | more_topics)
    counts = _partition_counts(cluster_admin(cluster), topics)
    options = []
    for topic in topics:
        known = sorted(ref.partition for ref in positions if ref.topic == topic)
        numbers = range(counts[topic]) if topic in counts else known
        rows = [PartitionOption(topic, n, *positions.get(PartitionRef(topic, n), (None, None))) for n in numbers]
        options.append(TopicOption(topic, tuple(rows), exists=topic in counts,
                                   internal=picker.others_internal and topic not in more_topics))
    return options


SOURCE_GROUPS_LISTED = 1000  # suggestions only: any group id can be typed, and a page must stay light


def other_groups(cluster: str, group: str) -> list[str]:
    """The cluster's consumer groups but this one (one ListGroups), for copying offsets from."""
    return sorted(g.group_id for g in selectors.group_listings(cluster) if g.group_id != group)[:SOURCE_GROUPS_LISTED]
