"""Resolves replay bounds to concrete offsets at submit time, so a replay is reproducible and its size known."""

from __future__ import annotations

from dataclasses import dataclass

from console.audit.models import AuditEvent
from console.clusters.models import Cluster
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError, TopicNotFound
from gateway.kafka.types import EARLIEST, LATEST, STABLE, PartitionRef
from console.offset_bounds import at_time_or_log_end
from offsets.selectors import group_listings
from sparkjobs import bounds
from topics.selectors import topic_names

MSG_PARTITION_MISSING = "Topic '{topic}' has no partition {partitions}."
MSG_NO_START_FOR = "The start offsets name no offset for partition {partitions}."
MSG_NOT_A_RESET = "Audit event #{seq} is not an offset reset of topic '{topic}'."


@dataclass(frozen=True)
class ResolvedRange:
    ranges: dict[int, tuple[int, int]]  # partition -> [start, end)

    @property
    def planned(self) -> int:
        return sum(end - start for start, end in self.ranges.values())


def _end_kind(isolation: str) -> str:
    # A read_committed reader cannot pass an open transaction: its "latest" is the last stable offset.
    return STABLE if isolation == "read_committed" else LATEST


def resolve_range(cluster: str, topic: str, partitions: list[int] | None, start_text: str,
                  end_text: str, *, isolation: str = "read_committed") -> ResolvedRange:
    start, end = bounds.parse_start(start_text), bounds.parse_end(end_text)
    admin = cluster_admin(cluster)
    known = [p.partition for p in admin.describe_topics([topic])[topic].partitions]
    chosen = sorted(set(partitions)) if partitions else known
    missing = [p for p in chosen if p not in known]
    if missing:
        raise ConsoleError(MSG_PARTITION_MISSING.format(topic=topic, partitions=", ".join(map(str, missing))))
    if isinstance(start, bounds.SkippedByReset):
        return _skipped_by_reset(cluster, topic, chosen if partitions else None, start.seq, isolation)
    refs = [PartitionRef(topic, p) for p in chosen]
    ats: list = [EARLIEST, _end_kind(isolation)]
    for bound in (start, end):
        if isinstance(bound, bounds.AtTime):
            ats.append(bound.timestamp_ms)
    found = admin.list_offsets_many(refs, ats)
    log_start = {r.partition: found[EARLIEST][r].offset for r in refs}
    log_end = {r.partition: found[_end_kind(isolation)][r].offset for r in refs}

    def at_time(ms: int) -> dict[int, int]:
        return {r.partition: at_time_or_log_end(found[ms][r].offset, log_end[r.partition]) for r in refs}

    if isinstance(start, bounds.Earliest):
        starts = dict(log_start)
    elif isinstance(start, bounds.Offsets):
        lacking = [p for p in chosen if p not in start.offsets]
        if lacking:
            raise ConsoleError(MSG_NO_START_FOR.format(partitions=", ".join(map(str, lacking))))
        starts = {p: start.offsets[p] for p in chosen}
    elif isinstance(start, bounds.AtTime):
        starts = at_time(start.timestamp_ms)
    else:  # a group's committed offsets; partitions it never committed start at the log start
        committed = admin.group_offsets([start.group])[start.group]
        if not committed:
            raise ConsoleError(f"Consumer group '{start.group}' has no committed offsets.")
        starts = {p: committed.get(PartitionRef(topic, p), log_start[p]) for p in chosen}
    if isinstance(end, bounds.Latest):
        ends = dict(log_end)
    elif isinstance(end, bounds.Offsets):
        ends = {p: end.offsets.get(p, log_end[p]) for p in chosen}
    else:
        ends = at_time(end.timestamp_ms)
    return ResolvedRange(bounds.clamp_ranges(starts, ends, log_start, log_end))


def _skipped_by_reset(cluster: str, topic: str, partitions: list[int] | None, seq: int,
                      isolation: str) -> ResolvedRange:
    from offsets.resets.services import reset_event
    from offsets.services import offsets_from_json

    event = reset_event(seq)
    before = {r.partition: o for r, o in offsets_from_json(event.before).items() if r.topic == topic and o is not None}
    after = {r.partition: o for r, o in offsets_from_json(event.after or {}).items()
             if r.topic == topic and o is not None}
    skipped = {p: (before[p], after[p]) for p in before if p in after and after[p] > before[p]
               and (partitions is None or p in partitions)}
    if not skipped:
        raise ConsoleError(f"Audit event #{seq} skipped no records of topic '{topic}'.")
    refs = [PartitionRef(topic, p) for p in skipped]
    found = cluster_admin(cluster).list_offsets_many(refs, [EARLIEST, _end_kind(isolation)])
    log_start = {r.partition: found[EARLIEST][r].offset for r in refs}
    log_end = {r.partition: found[_end_kind(isolation)][r].offset for r in refs}
    return ResolvedRange(bounds.clamp_ranges({p: s for p, (s, _) in skipped.items()},
                                             {p: e for p, (_, e) in skipped.items()}, log_start, log_end))


@dataclass(frozen=True)
class PartitionSpan:
    partition: int
    log_start: int
    log_end: int


@dataclass(frozen=True)
class ReplayChoices:
    """What the replay form offers as lists instead of free text: the cluster's topics, groups and audited resets
    of the topic, the other clusters a topic sink may be on, and the topic's partitions with their offsets."""

    topics: list[str]
    groups: list[str]
    resets: list[tuple[int, str]]  # (audit event seq, what it was)
    clusters: list[str]
    partitions: list[PartitionSpan]
    topic_missing: bool = False


RESETS_SHOWN = 50


def replay_choices(cluster: str, topic: str) -> ReplayChoices:
    """One Metadata request (or the shared topic table), one ListGroups, and for a chosen topic one DescribeTopics
    and one ListOffsets round; a cluster that lists no groups in time leaves that list empty, not the page."""
    admin = cluster_admin(cluster)
    try:
        groups = sorted(g.group_id for g in group_listings(cluster))
    except KafkaGatewayError:
        groups = []
    partitions, missing, resets = [], False, []
    if topic:
        try:
            refs = [PartitionRef(topic, p.partition) for p in admin.describe_topics([topic])[topic].partitions]
            found = admin.list_offsets_many(refs, [EARLIEST, LATEST])
            partitions = [PartitionSpan(r.partition, found[EARLIEST][r].offset, found[LATEST][r].offset)
                          for r in sorted(refs, key=lambda r: r.partition)]
        except TopicNotFound:
            missing = True
        events = (AuditEvent.objects.filter(cluster=cluster, action="group.offsets.reset", outcome="success",
                                            before__has_key=topic).order_by("-seq")[:RESETS_SHOWN])
        resets = [(e.seq, f"#{e.seq} · {e.target.removeprefix('group:')} · {e.created_at:%Y-%m-%d %H:%M} UTC")
                  for e in events]
    topics = topic_names(cluster)
    if partitions and topic not in topics:  # created since the shared topic table was built
        topics = sorted([*topics, topic])
    return ReplayChoices(topics=topics, groups=groups, resets=resets,
                         clusters=sorted(Cluster.objects.values_list("name", flat=True)), partitions=partitions,
                         topic_missing=missing)
