"""Reads for topics and brokers. Everything about many topics is fetched in batches and cached briefly."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.core.cache import cache

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from console.shared_table import connection_version
from console.kafka.errors import KafkaGatewayError, TopicNotFound
from console.kafka.types import BROKER, EARLIEST, LATEST, STABLE, TOPIC, PartitionRef, TopicMetadata
from console.user_regex import RegexRefused, compile_user_regex
from topics import table
from topics.table import TopicRow
from topics.configdocs import EXPLANATIONS, broker_default, human_value
from topics.decoding import Decoded, decode_bytes, present
from topics.diffing import ConfigChange, check_config_request, config_diff

log = logging.getLogger(__name__)

SORT_KEYS = {
    "name": lambda r: r.name,
    "partitions": lambda r: (r.partitions, r.name),
    "replication": lambda r: (r.replication_factor, r.name),
    "messages": lambda r: (-1 if r.messages is None else r.messages, r.name),
    "under_replicated": lambda r: (r.under_replicated + r.offline, r.name),
    "size": lambda r: (-1 if r.size_bytes is None else r.size_bytes, r.name),
}


def _version(admin) -> str:
    return connection_version(admin.connection)


def topic_table_snapshot(cluster: str) -> table.Snapshot | None:
    """The cluster's shared topic table, never built here: None while there is none yet (a rebuild is started in
    the background then, and when the one found is older than beat should allow). See topics/table.py."""
    admin = cluster_admin(cluster)
    version = _version(admin)
    found = table.read(cluster, version)
    if found is None or found.age_s > table.stale_after(found):
        refresh_admin = _patient(admin)
        table.refresh_in_background(cluster, version, lambda: _build_table(refresh_admin))
    if found is None:
        # One small request, so that a cluster that is down says so (503) instead of "being built" forever.
        admin.describe_cluster()
    return found


def topic_table(cluster: str) -> list[TopicRow]:
    """For the shell: the shared table, built now if there is none yet (or it is older than beat should allow)."""
    admin = background_admin(cluster)
    version = _version(admin)
    found = table.read(cluster, version)
    if found is None or found.age_s > table.stale_after(found):
        found = table.refresh(cluster, version, lambda: _build_table(admin),
                              wait_s=settings.TOPIC_SNAPSHOT_LOCK_S) or table.read(cluster, version)
    if found is None:
        raise ConsoleError(MSG_TABLE_BEING_BUILT.format(cluster=cluster))
    return found.rows


MSG_TABLE_BEING_BUILT = "The topic list of '{cluster}' is being built by another process; ask again in a moment."


def topic_snapshot_refresh(cluster: str, *, wait_s: float = 0.0) -> table.Snapshot | None:
    """Rebuilds the cluster's shared topic table now, with the longer bounds of a background job (what the beat
    task runs); None when another process is already rebuilding it (after waiting up to `wait_s` for it)."""
    admin = background_admin(cluster)
    return table.refresh(cluster, _version(admin), lambda: _build_table(admin), wait_s=wait_s)


def background_admin(cluster: str):
    """The cluster's gateway for the shared tables' background rebuilds."""
    return _patient(cluster_admin(cluster))


def _patient(admin):
    """The same gateway with a rebuild's longer bound on each call (a page's stays KAFKA_REQUEST_TIMEOUT_S)."""
    return type(admin)(admin.connection, timeout=settings.TOPIC_SNAPSHOT_TIMEOUT_S,
                       unreachable_backoff=admin.unreachable_backoff)


def topic_snapshot_note(cluster: str, topic: str, *, deleted: bool = False, at_least_partitions: int = 0,
                        created: TopicRow | None = None) -> None:
    """After a change made through the console: the topic's row, read now (one DescribeTopics and ListOffsets
    over its partitions only), or its removal, becomes visible to every process at once. `created`: the row of
    a topic just created, for when the brokers do not show it yet. The change is done by then, so Kafka failing
    here only leaves the row to the next rebuild."""
    if deleted:
        table.note_change(cluster, topic, None)
        return
    admin = cluster_admin(cluster)
    try:
        metadata = admin.describe_topics([topic])[topic]
        refs = [PartitionRef(topic, p.partition) for p in metadata.partitions]
        row = _row(metadata, admin.list_offsets_many(refs, [EARLIEST, LATEST], strict=False))
    except TopicNotFound:  # not known to the broker that answered yet (just created), or deleted by another client
        table.note_change(cluster, topic, created)
        return
    except KafkaGatewayError as exc:
        log.warning("The topic table of %s learns of the change to %s with its next rebuild: %s", cluster, topic,
                    exc.message)
        if created is not None:
            table.note_change(cluster, topic, created)
        return
    # A broker may still answer from metadata older than the change it just acknowledged (seen in CI).
    if row.partitions < at_least_partitions:
        row = replace(row, partitions=at_least_partitions, messages=None)
    table.note_change(cluster, topic, row)


def leader_windows(partitions: list[tuple[PartitionRef, int | None]], size: int) -> list[list[PartitionRef]]:
    """Pure: partitions in windows of at most `size` partitions per leader, so that each ListOffsets request (one
    per leader, per window) stays small and at most one per leader is in flight. Partitions without a leader are
    left out: their offsets cannot be read, and their topics' counts stay unknown."""
    by_leader: dict[int, list[PartitionRef]] = {}
    for ref, leader in partitions:
        if leader is not None:
            by_leader.setdefault(leader, []).append(ref)
    longest = max((len(refs) for refs in by_leader.values()), default=0)
    return [[ref for leader in sorted(by_leader) for ref in by_leader[leader][start:start + size]]
            for start in range(0, longest, size)]


def _build_table(admin) -> table.Snapshot:
    """One Metadata request for all topics, then earliest and latest offsets in windows per leader."""
    taken_at = time.time()
    topics = admin.list_topics()
    partitions = [(PartitionRef(t.name, p.partition), p.leader) for t in topics for p in t.partitions]
    offsets: dict = {EARLIEST: {}, LATEST: {}}
    for window in leader_windows(partitions, settings.TOPIC_SNAPSHOT_WINDOW):
        # strict=False: an offline partition makes its topic's count unknown instead of failing the whole list.
        found = admin.list_offsets_many(window, [EARLIEST, LATEST], strict=False)
        for at in (EARLIEST, LATEST):
            offsets[at].update(found[at])
    rows = [_row(t, offsets) for t in topics]
    return table.Snapshot(rows=rows, taken_at=taken_at, complete=all(r.messages is not None for r in rows))


def _row(topic: TopicMetadata, offsets) -> TopicRow:
    messages: int | None = 0
    for p in topic.partitions:
        ref = PartitionRef(topic.name, p.partition)
        start, end = offsets[EARLIEST].get(ref), offsets[LATEST].get(ref)
        if start is None or end is None:
            messages = None
            break
        messages += max(0, end.offset - start.offset)
    return TopicRow(
        name=topic.name, partitions=topic.partition_count, replication_factor=topic.replication_factor,
        under_replicated=sum(p.under_replicated for p in topic.partitions),
        offline=sum(p.offline for p in topic.partitions), messages=messages, internal=topic.is_internal,
    )


def filter_topics(rows: list[TopicRow], *, query: str = "", regex: bool = False, include_internal: bool = False,
                  sort: str = "name", descending: bool = False) -> list[TopicRow]:
    """Pure: search by substring (case-insensitive) or regular expression, hide internal topics, sort."""
    if regex and query:
        try:
            pattern = compile_user_regex(query)
        except RegexRefused as exc:
            raise ConsoleError(str(exc)) from None
        matches = lambda name: pattern.search(name) is not None  # noqa: E731
    else:
        needle = query.lower()
        matches = lambda name: needle in name.lower()  # noqa: E731
    picked = [r for r in rows if (include_internal or not r.internal) and matches(r.name)]
    return sorted(picked, key=SORT_KEYS.get(sort, SORT_KEYS["name"]), reverse=descending)


def with_configs(cluster: str, rows: list[TopicRow]) -> list[TopicRow]:
    """Adds cleanup.policy and retention to the rows shown, in one DescribeConfigs round for all of them. A topic
    that another client deleted since the table was taken is left off the page (the next table drops it too)."""
    if not rows:
        return rows
    configs = cluster_admin(cluster).describe_configs(TOPIC, [r.name for r in rows], skip_missing=True)

    def value(name: str, key: str) -> str | None:
        entry = configs.get(name, {}).get(key)
        return entry.value if entry else None

    return [
        TopicRow(**{**r.__dict__, "cleanup_policy": value(r.name, "cleanup.policy"),
                    "retention_ms": value(r.name, "retention.ms"), "retention_bytes": value(r.name, "retention.bytes")})
        for r in rows if r.name in configs
    ]


@dataclass(frozen=True)
class PartitionRow:
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    start: int
    end: int
    stable: int | None = None  # the last stable offset: where read_committed readers must stop
    blocking: object | None = None  # transactions.selectors.BlockingTransaction when stable < end
    sizes: dict[int, int] | None = None  # broker -> bytes on disk of its replica; None until known

    @property
    def leader_size(self) -> int | None:
        if not self.sizes:
            return None
        return self.sizes.get(self.leader) if self.leader in self.sizes else max(self.sizes.values())

    @property
    def messages(self) -> int:
        return max(0, self.end - self.start)

    @property
    def held_back(self) -> int:
        return 0 if self.stable is None else max(0, self.end - self.stable)

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)


@dataclass(frozen=True)
class ConfigRow:
    name: str
    value: str | None
    source: str
    inherited: str | None
    read_only: bool
    sensitive: bool
    explanation: str = ""

    @property
    def is_override(self) -> bool:
        return self.source in ("topic", "dynamic-broker", "dynamic-default-broker")

    @property
    def human(self) -> str:
        return human_value(self.name, self.value)

    @property
    def inherited_human(self) -> str:
        return human_value(self.name, self.inherited)


@dataclass(frozen=True)
class TopicDetail:
    name: str
    topic_id: str | None
    internal: bool
    partitions: list[PartitionRow]
    configs: list[ConfigRow] = field(default_factory=list)
    blocking_error: str | None = None  # why open transactions could not be described

    @property
    def messages(self) -> int:
        return sum(p.messages for p in self.partitions)

    @property
    def replication_factor(self) -> int:
        return max((len(p.replicas) for p in self.partitions), default=0)


def topic_detail(cluster: str, name: str) -> TopicDetail:
    from transactions.selectors import StableOffsets, blocking_transactions

    admin = cluster_admin(cluster)
    topic = admin.describe_topics([name])[name]
    refs = [PartitionRef(name, p.partition) for p in topic.partitions]
    offsets = admin.list_offsets_many(refs, [EARLIEST, LATEST, STABLE])
    stable = [StableOffsets(r, offsets[STABLE][r].offset, offsets[LATEST][r].offset) for r in refs]
    blocking_error = None
    try:
        blocking = blocking_transactions(cluster, stable)
    except KafkaGatewayError as exc:  # the page still shows the offsets; only the transaction's details are missing
        blocking, blocking_error = {}, exc.message
    from topics.disk import disk_usage

    usage = disk_usage(cluster)
    sizes = usage.partition_sizes(name) if usage is not None else {}
    partitions = [
        PartitionRow(partition=p.partition, leader=p.leader, replicas=p.replicas, isr=p.isr,
                     sizes=sizes.get(p.partition) if usage is not None else None,
                     start=offsets[EARLIEST][PartitionRef(name, p.partition)].offset,
                     end=offsets[LATEST][PartitionRef(name, p.partition)].offset,
                     stable=offsets[STABLE][PartitionRef(name, p.partition)].offset,
                     blocking=blocking.get(PartitionRef(name, p.partition)))
        for p in topic.partitions
    ]
    return TopicDetail(name=name, topic_id=topic.topic_id, internal=topic.is_internal, partitions=partitions,
                       configs=topic_config_rows(cluster, name), blocking_error=blocking_error)


def _broker_values(cluster: str) -> dict[str, str | None]:
    """One broker's effective configuration, where topic defaults come from; cached briefly (it rarely changes)."""
    key = f"topics:broker-values:{cluster}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    admin = cluster_admin(cluster)
    description = admin.describe_cluster()
    broker_id = str(description.controller_id if description.controller_id is not None else description.brokers[0].id)
    values = {k: e.value for k, e in admin.describe_configs(BROKER, [broker_id])[broker_id].items()}
    cache.set(key, values, 30)
    return values


def broker_values_invalidate(cluster: str) -> None:
    cache.delete(f"topics:broker-values:{cluster}")


def topic_config_rows(cluster: str, name: str) -> list[ConfigRow]:
    """Each config with its source and the value it would have without a topic override (the broker's)."""
    entries = cluster_admin(cluster).describe_configs(TOPIC, [name])[name]
    broker_values = _broker_values(cluster)
    rows = []
    for key, entry in sorted(entries.items()):
        inherited = broker_default(key, broker_values)
        rows.append(ConfigRow(
            name=key, value=entry.value, source=entry.source,
            inherited=inherited if inherited is not None else entry.inherited_value,
            read_only=entry.read_only, sensitive=entry.sensitive, explanation=EXPLANATIONS.get(key, ""),
        ))
    # The common ones first, in the order an admin looks for them.
    order = {key: i for i, key in enumerate(EXPLANATIONS)}
    return sorted(rows, key=lambda r: (order.get(r.name, len(order)), r.name))


def topic_inherited_values(cluster: str, keys: list[str]) -> dict[str, str | None]:
    broker_values = _broker_values(cluster)
    return {key: broker_default(key, broker_values) for key in keys}


@dataclass(frozen=True)
class BrokerConfigRow:
    name: str
    value: str | None
    source: str
    read_only: bool
    sensitive: bool

    @property
    def human(self) -> str:
        return human_value(self.name, self.value)


def broker_config_rows(cluster: str, broker_id: int) -> list[BrokerConfigRow]:
    entries = cluster_admin(cluster).describe_configs(BROKER, [str(broker_id)])[str(broker_id)]
    return [BrokerConfigRow(name=k, value=e.value, source=e.source, read_only=e.read_only, sensitive=e.sensitive)
            for k, e in sorted(entries.items())]


@dataclass(frozen=True)
class RecordRow:
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: Decoded
    value: Decoded
    headers: list[tuple[str, Decoded]]
    size: int
    # "" for a committed (or non-transactional) record; read_uncommitted also shows "aborted" records and
    # "open" ones, written in a transaction that has not ended.
    transaction: str = ""


@dataclass(frozen=True)
class OffsetGap:
    """Offsets with no record to show: transaction markers, and under read_committed aborted records too (or
    records a compacted topic removed)."""

    first: int
    last: int
    isolation: str
    is_gap = True

    @property
    def count(self) -> int:
        return self.last - self.first + 1


def offset_gaps(start: int, offsets: list[int], upto: int, isolation: str) -> list[OffsetGap]:
    """The runs of offsets in [start, upto) missing from `offsets` (ascending)."""
    gaps, expected = [], start
    for offset in [*offsets, upto]:
        if offset > expected:
            gaps.append(OffsetGap(expected, offset - 1, isolation))
        expected = max(expected, offset + 1)
    return gaps


@dataclass(frozen=True)
class RecordsPage:
    topic: str
    partition: int
    start: int
    log_start: int
    log_end: int
    records: list[RecordRow]
    limit: int
    isolation: str = "read_committed"
    last_stable: int | None = None
    gaps: list[OffsetGap] = field(default_factory=list)

    @property
    def entries(self) -> list:
        """Records and gaps in offset order, for the table."""
        return sorted([*self.records, *self.gaps], key=lambda e: e.offset if isinstance(e, RecordRow) else e.first)

    @property
    def held_back(self) -> int:
        return 0 if self.last_stable is None else max(0, self.log_end - self.last_stable)

    @property
    def older_offset(self) -> int | None:
        return max(self.log_start, self.start - self.limit) if self.start > self.log_start else None

    @property
    def newer_offset(self) -> int | None:
        last = self.records[-1].offset + 1 if self.records else self.start + self.limit
        return last if last < self.log_end else None


MSG_NO_PARTITION = "Topic '{topic}' has no partition {partition}."


def records_page(cluster: str, topic: str, partition: int, *, offset: int | None = None,
                 timestamp_ms: int | None = None, limit: int = 50, isolation: str = "read_committed") -> RecordsPage:
    """A page of records from `offset` (or from the first record at or after `timestamp_ms`, or the last page),
    read as a read_committed consumer would (the default) or read_uncommitted, with aborted records marked."""
    admin = cluster_admin(cluster)
    described = admin.describe_topics([topic])[topic]
    if partition not in {p.partition for p in described.partitions}:
        raise ConsoleError(MSG_NO_PARTITION.format(topic=topic, partition=partition))
    ref = PartitionRef(topic, partition)
    ats: list = [EARLIEST, LATEST, STABLE] + ([timestamp_ms] if timestamp_ms is not None else [])
    found = admin.list_offsets_many([ref], ats)
    log_start, log_end = found[EARLIEST][ref].offset, found[LATEST][ref].offset
    last_stable = found[STABLE][ref].offset
    if timestamp_ms is not None:
        start = found[timestamp_ms][ref].offset
        start = log_end if start < 0 else start  # no record at or after that time
    elif offset is None:
        start = max(log_start, log_end - limit)
    else:
        start = min(max(offset, log_start), log_end)
    timeout = settings.KAFKA_REQUEST_TIMEOUT_S + 2
    committed_end = min(log_end, last_stable)  # past it a read_committed reader waits for the transaction
    committed = admin.read_records(topic, partition, start=start, limit=limit, end=committed_end, timeout=timeout,
                                   isolation="read_committed") if start < committed_end else []
    if isolation == "read_committed":
        records, kinds = committed, {}
        upto = committed[-1].offset + 1 if len(committed) >= limit else committed_end
    else:
        records = admin.read_records(topic, partition, start=start, limit=limit, end=log_end, timeout=timeout)
        visible = {r.offset for r in committed}
        seen_until = committed[-1].offset + 1 if len(committed) >= limit else committed_end
        kinds = {r.offset: ("open" if r.offset >= last_stable else "aborted") for r in records
                 if r.offset not in visible and (r.offset < seen_until or r.offset >= last_stable)}
        upto = records[-1].offset + 1 if len(records) >= limit else min(log_end, start + limit)
    rows = [
        RecordRow(offset=r.offset, timestamp=r.timestamp, timestamp_type=r.timestamp_type, key=present(r.key, r.key_decoded),
                  value=present(r.value, r.value_decoded), headers=[(k, decode_bytes(v)) for k, v in r.headers],
                  size=len(r.key or b"") + len(r.value or b""), transaction=kinds.get(r.offset, ""))
        for r in records
    ]
    gaps = offset_gaps(start, [r.offset for r in rows], max(start, upto), isolation)
    return RecordsPage(topic=topic, partition=partition, start=start, log_start=log_start, log_end=log_end,
                       records=rows, limit=limit, isolation=isolation, last_stable=last_stable, gaps=gaps)


def config_change_preview(cluster: str, kind: str, name: str, *, set_values: dict[str, str],
                          delete: list[str]) -> list[ConfigChange]:
    """What a config change would do, for a topic or a broker; reads only."""
    check_config_request(set_values, delete)
    entries = cluster_admin(cluster).describe_configs(kind, [name])[name]
    inherited = topic_inherited_values(cluster, delete) if kind == TOPIC and delete else None
    return config_diff(entries, set_values=set_values, delete=delete, inherited=inherited)
