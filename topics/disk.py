"""Bytes on disk per topic and partition (DescribeLogDirs to every broker, through Kafka's Java client).

Each web process keeps the last answer per cluster and asks again in the background when it is older than
TOPIC_LIST_CACHE_S, so the topic list never waits for it: the first request after a start (which pays for the
cluster's JVM) shows the sizes as not known yet, and the next ones have them."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field, replace

from django.conf import settings

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from console.kafka.errors import KafkaGatewayError
from console.kafka.types import PartitionRef, ReplicaSize

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DiskUsage:
    replicas: list[ReplicaSize]
    taken_at: float
    by_topic: dict[str, int] = field(default_factory=dict)  # all replicas of the topic, every broker

    @classmethod
    def of(cls, replicas: list[ReplicaSize]) -> DiskUsage:
        by_topic: dict[str, int] = {}
        for replica in replicas:
            if not replica.future:
                by_topic[replica.ref.topic] = by_topic.get(replica.ref.topic, 0) + replica.size
        return cls(replicas=replicas, taken_at=time.time(), by_topic=by_topic)

    def partition_sizes(self, topic: str) -> dict[int, dict[int, int]]:
        """partition -> {broker: bytes} for one topic."""
        sizes: dict[int, dict[int, int]] = {}
        for replica in self.replicas:
            if replica.ref.topic == topic and not replica.future:
                sizes.setdefault(replica.ref.partition, {})[replica.broker] = replica.size
        return sizes


_usage: dict[str, DiskUsage] = {}
_loading: set[str] = set()
_lock = threading.Lock()


def _load(cluster: str) -> DiskUsage:
    admin = cluster_admin(cluster)
    brokers = [b.id for b in admin.describe_cluster().brokers]
    usage = DiskUsage.of(admin.describe_log_dirs(brokers))
    with _lock:
        _usage[cluster] = usage
    return usage


def _load_in_background(cluster: str) -> None:
    with _lock:
        if cluster in _loading:
            return
        _loading.add(cluster)

    def run() -> None:
        try:
            _load(cluster)
        except (KafkaGatewayError, ConsoleError) as exc:
            log.info("Disk usage of cluster '%s' not read: %s", cluster, exc)
        except Exception:  # a background refresh must never take the process down
            log.exception("Disk usage of cluster '%s' failed", cluster)
        finally:
            with _lock:
                _loading.discard(cluster)

    threading.Thread(target=run, name=f"disk-usage-{cluster}", daemon=True).start()


def disk_usage(cluster: str, *, wait: bool = False) -> DiskUsage | None:
    """The last known usage (refreshed in the background when old); with `wait`, read now if none is known."""
    with _lock:
        current = _usage.get(cluster)
    if current is None and wait:
        return _load(cluster)
    if current is None or time.time() - current.taken_at > settings.TOPIC_LIST_CACHE_S:
        _load_in_background(cluster)
    return current


def forget(cluster: str) -> None:
    with _lock:
        _usage.pop(cluster, None)


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
