"""Preferred leader elections and partition reassignments (with a replication throttle): previewed, admin only
(enforced by the callers' role guards), audited with the replicas and leaders before and after."""

from __future__ import annotations

from console.audit.guarded import MSG_REASON
from console.audit.actor import Actor
from console.audit.services import audited
from console.clusters.selectors import cluster_admin
from console.errors import Conflict, ConsoleError
from gateway.kafka.types import BROKER, TOPIC, PartitionRef
from replication import selectors
from replication.planning import (Move, checked_moves, parse_assignment, parse_scope, replication_factor_targets,
                                  throttled_replicas)

MSG_NOTHING_TO_ELECT = "Every partition in scope is already led by its preferred replica (or that replica is out of sync)."
MSG_IN_PROGRESS = "Topic {topic!r} is being reassigned already ({partitions}); wait for it or cancel it first."
MSG_NONE_IN_PROGRESS = "No reassignment of topic {topic!r} is in progress."
MSG_STILL_MOVING = "Topic {topic!r} is still being reassigned ({partitions}); the throttle stays until it ends."
MSG_THROTTLE = "The throttle is in bytes per second per broker, at least 1 (or none)."
MSG_REFUSED = "Kafka refused partitions {details}"
BROKER_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
TOPIC_THROTTLES = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def _need_reason(reason: str) -> None:
    if not reason.strip():
        raise ConsoleError(MSG_REASON)


def _placement(cluster: str, topic: str) -> dict[str, dict[str, object]]:
    return {str(p.partition): {"replicas": list(p.replicas), "leader": p.leader, "isr": list(p.isr)}
            for p in selectors.topic_partitions(cluster, topic)}


def leaders_elect_preview(*, cluster: str, topics: list[str] | None = None) -> list[tuple[str, object]]:
    """`topics` items are a topic (all its partitions) or TOPIC:0,2 (those partitions); None: every topic."""
    scope = parse_scope(topics)
    found = selectors.leaders_not_preferred(cluster, sorted(scope) if scope else None)
    return [(name, p) for name, p in found if not scope or scope[name] is None or p.partition in scope[name]]


def leaders_elect(*, actor: Actor, cluster: str, topics: list[str] | None = None, reason: str) -> dict:
    """Preferred leader election for every partition in scope whose preferred replica is in sync but not leading."""
    _need_reason(reason)
    chosen = leaders_elect_preview(cluster=cluster, topics=topics)
    if not chosen:
        raise ConsoleError(MSG_NOTHING_TO_ELECT)
    refs = [PartitionRef(name, p.partition) for name, p in chosen]
    before = {f"{name}-{p.partition}": {"leader": p.leader, "preferred": p.replicas[0]} for name, p in chosen}
    named = sorted({name for name, _ in chosen})
    target = f"topic:{named[0]}" if topics and len(named) == 1 else "cluster"
    with audited(actor=actor, action="leaders.elect", cluster=cluster, target=target, reason=reason,
                 params={"topics": topics, "partitions": sorted(before)}, before=before) as record:
        errors = cluster_admin(cluster).elect_preferred_leaders(refs)
        # An election Kafka reports done made the preferred replica the leader; a describe right now could still
        # be answered from a broker's older metadata, so only a refused partition keeps its leader before.
        record.after = {f"{r.topic}-{r.partition}": {
            "leader": before[f"{r.topic}-{r.partition}"]["preferred" if errors.get(r) is None else "leader"],
            "error": errors.get(r)} for r in refs}
        failed = {k: v["error"] for k, v in record.after.items() if v["error"]}
        if failed:
            raise Conflict(MSG_REFUSED.format(details="; ".join(f"{k}: {v}" for k, v in failed.items())))
    return record.after


def reassignment_targets(*, cluster: str, topic: str, assignment: str = "",
                         replication_factor: int | None = None) -> dict[int, tuple[int, ...]]:
    """The target replicas asked for: an explicit placement, or a new replication factor over the live brokers."""
    if assignment.strip():
        return parse_assignment(assignment)
    partitions = selectors.topic_partitions(cluster, topic)
    live = {b.id for b in cluster_admin(cluster).describe_cluster().brokers}
    return replication_factor_targets({p.partition: p.replicas for p in partitions}, replication_factor, live)


def reassignment_preview(*, cluster: str, topic: str, targets: dict[int, tuple[int, ...]]) -> list[Move]:
    partitions = selectors.topic_partitions(cluster, topic)
    brokers = {b.id for b in cluster_admin(cluster).describe_cluster().brokers}
    return checked_moves(topic, {p.partition: p.replicas for p in partitions}, targets, brokers)


def reassignment_start(*, actor: Actor, cluster: str, topic: str, targets: dict[int, tuple[int, ...]],
                       throttle: int | None, reason: str) -> list[Move]:
    """Sets the replication throttle (as Kafka's tool does: a rate on every broker involved, the moving replicas
    named on the topic), then starts the reassignment. The throttle stays until reassignment_finish."""
    _need_reason(reason)
    if throttle is not None and throttle < 1:
        raise ConsoleError(MSG_THROTTLE)
    moving = selectors.reassignments(cluster, topic)
    if moving:
        raise Conflict(MSG_IN_PROGRESS.format(topic=topic, partitions=", ".join(str(r.ref.partition) for r in moving)))
    moves = reassignment_preview(cluster=cluster, topic=topic, targets=targets)
    admin = cluster_admin(cluster)
    params = {"targets": {str(m.partition): list(m.target) for m in moves}, "throttle_bytes_per_s": throttle}
    with audited(actor=actor, action="reassignment.start", cluster=cluster, target=f"topic:{topic}", reason=reason,
                 params=params, before=_placement(cluster, topic)) as record:
        if throttle is not None:
            leaders, followers = throttled_replicas(moves)
            admin.alter_configs(TOPIC, topic, set_values=dict(zip(TOPIC_THROTTLES, (leaders, followers))), delete=[])
            for broker in sorted({b for m in moves for b in (*m.current, *m.target)}):
                admin.alter_configs(BROKER, str(broker), set_values={k: str(throttle) for k in BROKER_THROTTLES},
                                    delete=[])
        errors = admin.alter_reassignments({PartitionRef(topic, m.partition): m.target for m in moves})
        record.after = {"started": sorted(str(r.partition) for r, e in errors.items() if e is None),
                        "errors": {str(r.partition): e for r, e in errors.items() if e}}
        if record.after["errors"]:
            raise Conflict(MSG_REFUSED.format(details="; ".join(f"{p}: {e}" for p, e in record.after["errors"].items())))
    return moves


def reassignment_cancel(*, actor: Actor, cluster: str, topic: str, reason: str) -> dict:
    """Cancels the topic's reassignment in progress (its partitions return to their replicas before the move)
    and removes the throttle."""
    _need_reason(reason)
    moving = selectors.reassignments(cluster, topic)
    if not moving:
        raise ConsoleError(MSG_NONE_IN_PROGRESS.format(topic=topic))
    before = {str(r.ref.partition): {"replicas": list(r.replicas), "adding": list(r.adding),
                                     "removing": list(r.removing)} for r in moving}
    admin = cluster_admin(cluster)
    with audited(actor=actor, action="reassignment.cancel", cluster=cluster, target=f"topic:{topic}", reason=reason,
                 params={"partitions": sorted(before)}, before=before) as record:
        errors = admin.alter_reassignments({r.ref: None for r in moving})
        _remove_throttle(cluster, topic, {b for r in moving for b in r.replicas})
        record.after = {"placement": _placement(cluster, topic),
                        "errors": {str(r.partition): e for r, e in errors.items() if e}}
    return record.after


def reassignment_finish(*, actor: Actor, cluster: str, topic: str, reason: str = "reassignment complete") -> dict:
    """Once nothing of the topic moves any more, removes the throttle (what Kafka's tool does on --verify)."""
    moving = selectors.reassignments(cluster, topic)
    if moving:
        raise Conflict(MSG_STILL_MOVING.format(topic=topic,
                                               partitions=", ".join(str(r.ref.partition) for r in moving)))
    brokers = {b.id for b in cluster_admin(cluster).describe_cluster().brokers}
    with audited(actor=actor, action="reassignment.finish", cluster=cluster, target=f"topic:{topic}", reason=reason,
                 params={}, before=None) as record:
        _remove_throttle(cluster, topic, brokers)
        record.after = {"placement": _placement(cluster, topic)}
    return record.after


def _remove_throttle(cluster: str, topic: str, brokers: set[int]) -> None:
    admin = cluster_admin(cluster)
    admin.alter_configs(TOPIC, topic, set_values={}, delete=list(TOPIC_THROTTLES))
    for broker in sorted(brokers):
        admin.alter_configs(BROKER, str(broker), set_values={}, delete=list(BROKER_THROTTLES))
