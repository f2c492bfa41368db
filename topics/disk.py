"""Bytes on disk per topic and partition (DescribeLogDirs to every broker, through Kafka's Java client).

At 40,000 partitions the answer is tens of thousands of replicas: it is one more table of the cluster shared by
every process (console/shared_table.py), rebuilt by the topic table's beat task, so no web worker asks every broker
for it itself. A row is a topic (its total and its replicas' sizes as plain lists), so a worker decoding a new
snapshot makes one small object per topic, not one per replica. Until the first one exists, pages show sizes as
not known yet (and start building it in the background)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

from django.conf import settings

from console import shared_table
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef, ReplicaSize
from console.shared_table import Snapshot, connection_version
from topics.background import background_admin

FORMAT = 2  # bump when the stored row layout changes


@dataclass(frozen=True)
class TopicDisk:
    topic: str
    size: int  # every replica, every broker (replicas being moved to another log dir not counted)
    replicas: list  # [partition, broker, bytes] each


def topic_rows(replicas: list[ReplicaSize]) -> list[TopicDisk]:
    """Pure: DescribeLogDirs' replicas grouped by topic."""
    per_topic: dict[str, list] = {}
    for replica in replicas:
        if not replica.future:
            per_topic.setdefault(replica.ref.topic, []).append([replica.ref.partition, replica.broker, replica.size])
    return [TopicDisk(topic, sum(r[2] for r in rows), rows) for topic, rows in sorted(per_topic.items())]


@dataclass(frozen=True)
class DiskUsage:
    taken_at: float
    by_topic: dict[str, int]  # all replicas of the topic, every broker
    _rows: dict[str, TopicDisk]

    @classmethod
    def of(cls, rows: list[TopicDisk], taken_at: float) -> DiskUsage:
        return cls(taken_at=taken_at, by_topic={r.topic: r.size for r in rows}, _rows={r.topic: r for r in rows})

    def partition_sizes(self, topic: str) -> dict[int, dict[int, int]]:
        """partition -> {broker: bytes} for one topic."""
        sizes: dict[int, dict[int, int]] = {}
        row = self._rows.get(topic)
        for partition, broker, size in row.replicas if row else ():
            sizes.setdefault(partition, {})[broker] = size
        return sizes


TABLE = shared_table.SharedTable(
    "disk", format=FORMAT, row_out=lambda r: [r.topic, r.size, r.replicas], row_in=lambda v: TopicDisk(*v),
    key=lambda r: r.topic, interval_setting="DISK_SNAPSHOT_INTERVAL_S", lock_setting="TOPIC_SNAPSHOT_LOCK_S")

_usages: dict[str, DiskUsage] = {}  # cluster -> what was made of its newest snapshot in this process
_usages_lock = threading.Lock()


def _build(admin) -> Snapshot:
    taken_at = time.time()
    brokers = [b.id for b in admin.describe_cluster().brokers]
    return Snapshot(rows=topic_rows(admin.describe_log_dirs(brokers)), taken_at=taken_at, complete=True)


def _usage_of(cluster: str, snapshot: Snapshot) -> DiskUsage:
    """Made once per process and snapshot, not per request."""
    with _usages_lock:
        known = _usages.get(cluster)
        if known is not None and known.taken_at == snapshot.taken_at:
            return known
    usage = DiskUsage.of(snapshot.rows, snapshot.taken_at)
    with _usages_lock:
        _usages[cluster] = usage
    return usage


def disk_usage_refresh(cluster: str, *, wait_s: float = 0.0, only_when_due: bool = False) -> DiskUsage | None:
    """Reads every broker's log dirs now and shares the answer (what the beat task runs, `only_when_due`: when the
    shared one is older than DISK_SNAPSHOT_INTERVAL_S or its own cost allows); None when another process is
    already reading them, or it was not due."""
    admin = background_admin(cluster)
    version = connection_version(admin.connection)
    if only_when_due and not TABLE.due(cluster, version):
        return None
    fresh = TABLE.refresh(cluster, version, lambda: _build(admin), wait_s=wait_s)
    return None if fresh is None else _usage_of(cluster, fresh)


# A topic the shared usage does not know was made after it: a page asking for it starts a rebuild, at most this
# often (a topic whose brokers do not answer DescribeLogDirs stays unknown without asking every broker per view).
UNKNOWN_TOPIC_REBUILD_S = 10.0


def disk_usage(cluster: str, *, wait: bool = False, topic: str = "") -> DiskUsage | None:
    """The shared usage, or None while there is none yet (a rebuild is started in the background then, when the
    one found is older than beat should allow, and when `topic` is not in it); with `wait`, read now if none is
    known."""
    admin = cluster_admin(cluster)
    version = connection_version(admin.connection)
    found = TABLE.read(cluster, version)
    if found is None and wait:
        return disk_usage_refresh(cluster, wait_s=settings.TOPIC_SNAPSHOT_LOCK_S) or disk_usage(cluster)
    usage = None if found is None else _usage_of(cluster, found)
    newer_topic = usage is not None and bool(topic) and topic not in usage.by_topic and \
        found.age_s > UNKNOWN_TOPIC_REBUILD_S
    if found is None or found.age_s > TABLE.stale_after(found) or newer_topic:
        patient = background_admin(cluster)
        TABLE.refresh_in_background(cluster, version, lambda: _build(patient))
    return usage


def forget(cluster: str) -> None:
    TABLE.invalidate(cluster)
    with _usages_lock:
        _usages.pop(cluster, None)


def with_sizes(rows: list, usage: DiskUsage | None) -> list:
    """The rows (a page's, not the whole table's: copying 10,000 rows per request was most of the list page) with
    `size_bytes` filled in where the usage is known."""
    if usage is None:
        return rows
    return [replace(r, size_bytes=usage.by_topic.get(r.name, 0)) for r in rows]


def partition_refs_sizes(usage: DiskUsage | None, topic: str) -> dict[PartitionRef, dict[int, int]]:
    if usage is None:
        return {}
    return {PartitionRef(topic, p): sizes for p, sizes in usage.partition_sizes(topic).items()}
