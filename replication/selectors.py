"""Reads: brokers up and down, the metadata quorum, leaders that are not preferred, reassignments in progress."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.core.cache import cache

from console.clusters.selectors import cluster_admin
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import PartitionRef, QuorumInfo, Reassignment
from replication.planning import not_preferred


_SEEN_KEY = "brokers-seen:{cluster}"


@dataclass(frozen=True)
class BrokerRow:
    id: int
    host: str
    port: int | None
    rack: str | None
    up: bool
    is_controller: bool  # the quorum leader when the quorum could be read, else what DescribeCluster names
    replicas: int
    leaders: int


@dataclass(frozen=True)
class BrokersOverview:
    cluster_id: str | None
    brokers: tuple[BrokerRow, ...]
    quorum: QuorumInfo | None
    quorum_error: str  # why the quorum (and fenced brokers) could not be read, or ""
    offline_partitions: int
    under_replicated_partitions: int

    @property
    def down(self) -> tuple[BrokerRow, ...]:
        return tuple(b for b in self.brokers if not b.up)


def brokers_overview(cluster: str) -> BrokersOverview:
    """Live brokers from DescribeCluster; brokers that are down from the controller's registrations (fenced) and
    from the replica lists that still name them; the active controller from the KRaft quorum."""
    admin = cluster_admin(cluster)
    description = admin.describe_cluster()
    topics = admin.list_topics()
    partitions = [p for t in topics for p in t.partitions]
    replicas = Counter(b for p in partitions for b in p.replicas)
    leaders = Counter(p.leader for p in partitions if p.leader is not None and p.leader >= 0)
    quorum, registered, error = None, [], ""
    try:
        quorum = admin.describe_quorum()
        registered = admin.describe_registered_brokers()
    except KafkaGatewayError as exc:
        error = exc.message
    live = {b.id: b for b in description.brokers}
    # A broker that is down is in no answer any more; its address and rack are what this process saw last.
    seen = cache.get(_SEEN_KEY.format(cluster=cluster)) or {}
    seen.update({b.id: b for b in description.brokers})
    cache.set(_SEEN_KEY.format(cluster=cluster), seen, timeout=None)
    known = {**seen, **{b.id: b for b in registered}}
    controller = quorum.leader_id if quorum is not None else description.controller_id
    rows = []
    for broker_id in sorted(set(live) | set(known) | set(replicas)):
        found = live.get(broker_id) or known.get(broker_id)
        up = broker_id in live and not getattr(known.get(broker_id), "fenced", False)
        rows.append(BrokerRow(id=broker_id, host=found.host if found else "?", port=found.port if found else None,
                              rack=found.rack if found else None, up=up, is_controller=broker_id == controller,
                              replicas=replicas[broker_id], leaders=leaders[broker_id]))
    return BrokersOverview(cluster_id=description.cluster_id, brokers=tuple(rows), quorum=quorum, quorum_error=error,
                           offline_partitions=sum(p.offline for p in partitions),
                           under_replicated_partitions=sum(p.under_replicated for p in partitions))


def topic_partitions(cluster: str, topic: str):
    return cluster_admin(cluster).describe_topics([topic])[topic].partitions


def leaders_not_preferred(cluster: str, topics: list[str] | None = None) -> list[tuple[str, object]]:
    """(topic, partition) pairs whose in-sync preferred replica does not lead."""
    admin = cluster_admin(cluster)
    described = admin.describe_topics(topics) if topics else {t.name: t for t in admin.list_topics()}
    return [(name, p) for name, t in sorted(described.items()) for p in not_preferred(t.partitions)]


def reassignments(cluster: str, topic: str | None = None) -> list[Reassignment]:
    found = cluster_admin(cluster).list_reassignments()
    return [r for r in found if topic is None or r.ref.topic == topic]


def reassignment_progress(cluster: str, topic: str) -> list[dict]:
    """Each moving partition with how many joining replicas have caught up (are in the ISR)."""
    moving = {r.ref: r for r in reassignments(cluster, topic)}
    if not moving:
        return []
    isr = {PartitionRef(topic, p.partition): p.isr for p in topic_partitions(cluster, topic)}
    rows = []
    for ref, r in sorted(moving.items()):
        caught_up = [b for b in r.adding if b in isr.get(ref, ())]
        rows.append({"reassignment": r, "caught_up": tuple(caught_up),
                     "percent": 100 * len(caught_up) // len(r.adding) if r.adding else 100})
    return rows
