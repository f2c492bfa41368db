"""Bytes on disk per topic and partition (DescribeLogDirs to every broker, through Kafka's Java client).

At 40,000 partitions the answer is tens of thousands of replicas: it is one more table of the cluster shared by
every process (console/shared_table.py), rebuilt by the topic table's beat task, so a web worker only decodes it
once per rebuild instead of asking every broker for it itself. Until the first one exists, pages show sizes as
not known yet (and start building it in the background)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace

from django.conf import settings

from console import shared_table
from console.clusters.selectors import cluster_admin
from console.kafka.types import PartitionRef, ReplicaSize
from console.shared_table import Snapshot, connection_version

FORMAT = 1  # bump when the stored row layout changes


@dataclass(frozen=True)
class DiskUsage:
    replicas: list[ReplicaSize]
    taken_at: float
    by_topic: dict[str, int] = field(default_factory=dict)  # all replicas of the topic, every broker
    of_topic: dict[str, list[ReplicaSize]] = field(default_factory=dict)  # a topic page reads only its own

    @classmethod
    def of(cls, replicas: list[ReplicaSize]) -> DiskUsage:
        by_topic: dict[str, int] = {}
        of_topic: dict[str, list[ReplicaSize]] = {}
        for replica in replicas:
            if not replica.future:
                by_topic[replica.ref.topic] = by_topic.get(replica.ref.topic, 0) + replica.size
                of_topic.setdefault(replica.ref.topic, []).append(replica)
        return cls(replicas=replicas, taken_at=time.time(), by_topic=by_topic, of_topic=of_topic)

    def partition_sizes(self, topic: str) -> dict[int, dict[int, int]]:
        """partition -> {broker: bytes} for one topic."""
        sizes: dict[int, dict[int, int]] = {}
        for replica in self.of_topic.get(topic, ()):
            sizes.setdefault(replica.ref.partition, {})[replica.broker] = replica.size
        return sizes


def _row_out(replica: ReplicaSize) -> list:
    return [replica.ref.topic, replica.ref.partition, replica.broker, replica.log_dir, replica.size,
            replica.offset_lag, replica.future]


def _row_in(values: list) -> ReplicaSize:
    topic, partition, broker, log_dir, size, offset_lag, future = values
    return ReplicaSize(PartitionRef(topic, partition), broker, log_dir, size, offset_lag, future)


TABLE = shared_table.SharedTable(
    "disk", format=FORMAT, row_out=_row_out, row_in=_row_in,
    key=lambda r: f"{r.ref.topic}\n{r.ref.partition}\n{r.broker}\n{r.log_dir}\n{r.future}",
    interval_setting="TOPIC_SNAPSHOT_INTERVAL_S", lock_setting="TOPIC_SNAPSHOT_LOCK_S")

_usages: dict[str, tuple[float, DiskUsage]] = {}  # cluster -> (taken_at, what was made of that snapshot)
_usages_lock = threading.Lock()


def _build(admin) -> Snapshot:
    taken_at = time.time()
    brokers = [b.id for b in admin.describe_cluster().brokers]
    return Snapshot(rows=admin.describe_log_dirs(brokers), taken_at=taken_at, complete=True)


def _usage_of(cluster: str, snapshot: Snapshot) -> DiskUsage:
    """Totals per topic are added up once per process and snapshot, not per request."""
    with _usages_lock:
        known = _usages.get(cluster)
        if known is not None and known[0] == snapshot.taken_at:
            return known[1]
    usage = replace(DiskUsage.of(snapshot.rows), taken_at=snapshot.taken_at)
    with _usages_lock:
        _usages[cluster] = (snapshot.taken_at, usage)
    return usage


def disk_usage_refresh(cluster: str, *, wait_s: float = 0.0) -> DiskUsage | None:
    """Reads every broker's log dirs now and shares the answer (what the beat task runs); None when another
    process is already reading them."""
    from topics.selectors import background_admin

    admin = background_admin(cluster)
    fresh = TABLE.refresh(cluster, connection_version(admin.connection), lambda: _build(admin), wait_s=wait_s)
    return None if fresh is None else _usage_of(cluster, fresh)


def disk_usage(cluster: str, *, wait: bool = False) -> DiskUsage | None:
    """The shared usage, or None while there is none yet (a rebuild is started in the background then, and when
    the one found is older than beat should allow); with `wait`, read now if none is known."""
    from topics.selectors import background_admin

    admin = cluster_admin(cluster)
    version = connection_version(admin.connection)
    found = TABLE.read(cluster, version)
    if found is None and wait:
        return disk_usage_refresh(cluster, wait_s=settings.TOPIC_SNAPSHOT_LOCK_S) or disk_usage(cluster)
    if found is None or found.age_s > TABLE.stale_after(found):
        patient = background_admin(cluster)
        TABLE.refresh_in_background(cluster, version, lambda: _build(patient))
    return None if found is None else _usage_of(cluster, found)


def forget(cluster: str) -> None:
    TABLE.invalidate(cluster)
    with _usages_lock:
        _usages.pop(cluster, None)


def with_sizes(cluster: str, rows: list) -> list:
    """Topic rows with `size_bytes` filled in where the usage is known."""
    usage = disk_usage(cluster)
    if usage is None:
        return rows
    return [replace(r, size_bytes=usage.by_topic.get(r.name, 0)) for r in rows]


def partition_refs_sizes(usage: DiskUsage | None, topic: str) -> dict[PartitionRef, dict[int, int]]:
    if usage is None:
        return {}
    return {PartitionRef(topic, p): sizes for p, sizes in usage.partition_sizes(topic).items()}
