"""Which client software and versions are connected to a cluster, read now from each broker's JMX (KIP-511's
socket-server metrics, gateway/kafka/java/ops_client_software.py) through the cluster's metrics source.

Kafka counts these per broker connection: a version shown here is some client's, and which group's member it is,
Kafka does not say. A Prometheus source is not asked: the console's exporter configuration does not keep these
series, so there is nothing there to read."""

from __future__ import annotations

from dataclasses import dataclass

from brokers import conf
from brokers.endpoints import endpoints
from brokers.models import MetricsSource
from console.clusters.selectors import cluster_admin, cluster_get
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError

MSG_NO_SOURCE = "the cluster has no JMX metrics source (Health → metrics source)"
MSG_PROMETHEUS = "the cluster's metrics come from Prometheus, which does not keep the brokers' client software series"
MSG_DISABLED = "the cluster's metrics source is switched off"


@dataclass(frozen=True)
class SoftwareRow:
    name: str
    version: str
    connections: int  # open now, summed over the brokers that answered and their listeners
    brokers: tuple[int, ...]


@dataclass(frozen=True)
class ClusterSoftware:
    rows: tuple[SoftwareRow, ...]  # empty with `note` when not read
    note: str = ""  # why nothing (or not every broker) was read
    read: bool = False  # at least one broker answered

    @property
    def pairs(self) -> list[tuple[str, str]] | None:
        """(software, version) pairs, or None when no broker could be read."""
        return [(r.name, r.version) for r in self.rows] if self.read else None


def cluster_client_software(cluster: str) -> ClusterSoftware:
    registration = cluster_get(cluster)
    source = MetricsSource.objects.filter(cluster=cluster).first()
    if source is None:
        return ClusterSoftware((), MSG_NO_SOURCE)
    if not source.enabled:
        return ClusterSoftware((), MSG_DISABLED)
    if source.kind != MetricsSource.JMX:
        return ClusterSoftware((), MSG_PROMETHEUS)
    admin = cluster_admin(cluster)
    try:
        brokers = [(b.id, b.host, b.port) for b in admin.describe_cluster().brokers]
        targets, refused = endpoints(source, registration, brokers)
        readings = admin.read_client_software(targets, timeout=conf.read_timeout_s()) if targets else []
    except (ConsoleError, KafkaGatewayError) as exc:
        return ClusterSoftware((), exc.message)
    totals: dict[tuple[str, str], int] = {}
    where: dict[tuple[str, str], set[int]] = {}
    problems = [refused[b] for b in sorted(refused)] + [r.error for r in readings if r.error]
    for reading in readings:
        for (name, version, _listener), count in reading.connections.items():
            totals[(name, version)] = totals.get((name, version), 0) + count
            where.setdefault((name, version), set()).add(reading.broker)
    rows = tuple(SoftwareRow(name, version, count, tuple(sorted(where[(name, version)])))
                 for (name, version), count in sorted(totals.items()))
    return ClusterSoftware(rows, "; ".join(problems), read=any(not r.error for r in readings))
