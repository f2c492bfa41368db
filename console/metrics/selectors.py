"""The reads behind /metrics: a fixed handful of queries however many groups and clusters there are."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from operator import or_

from django.db.models import Count, Exists, OuterRef, Q

from console.audit.models import AuditEvent
from offsets.models import GroupGeneration, GroupLagStatus, LagSample, LagSweep, RecorderStatus
from sparkjobs.models import ReplayJob

_audit_lock = threading.Lock()
_audit_counted: tuple[int, str, dict[tuple[str, str], int]] = (0, "", {})  # (seq, its hash, counts up to it)


@dataclass(frozen=True)
class SweepState:
    cluster: str
    last_ok_at: datetime | None
    last_error_at: datetime | None
    duration_ms: int
    groups: int
    partitions: int
    skipped_groups: int


def lag_sweeps() -> list[SweepState]:
    rows = LagSweep.objects.order_by("cluster").values_list(
        "cluster", "last_ok_at", "last_error_at", "duration_ms", "groups", "partitions", "skipped_groups")
    return [SweepState(*row) for row in rows]


def newest_group_lag(sweeps: list[SweepState]) -> list[tuple[str, str, str, int]]:
    """(cluster, group, topic, lag) of each cluster's newest sweep. The sampler writes LagSweep.last_ok_at in the
    transaction that stores the sweep's raw samples, with their time, so it names the newest rows without a MAX()
    over hours of samples; and a group gone from the cluster drops out instead of showing its last lag forever."""
    newest = [Q(cluster=s.cluster, step=0, time=s.last_ok_at) for s in sweeps if s.last_ok_at is not None]
    if not newest:
        return []
    rows = LagSample.objects.filter(reduce(or_, newest)).order_by()
    return list(rows.values_list("cluster", "group", "topic", "lag"))


def group_statuses() -> list[tuple[str, str, str]]:
    """(cluster, group, status) of every group the latest sweep of its cluster listed."""
    return list(GroupLagStatus.objects.order_by().values_list("cluster", "group", "status"))


def group_windows() -> list[tuple[str, str, dict]]:
    """(cluster, group, window): the per-partition samples behind each status (only read when partitions are asked)."""
    return list(GroupLagStatus.objects.order_by().values_list("cluster", "group", "window"))


def group_rebalances() -> list[tuple[str, str, int]]:
    """(cluster, group, generations recorded) for the groups the latest sweep listed. History is kept for groups
    long deleted; counting only current ones keeps the number of series that of the live groups."""
    listed = GroupLagStatus.objects.filter(cluster=OuterRef("cluster"), group=OuterRef("group"))
    rows = (GroupGeneration.objects.filter(Exists(listed)).order_by().values("cluster", "group")
            .annotate(n=Count("id")).values_list("cluster", "group", "n"))
    return list(rows)


def recorder_statuses() -> list[RecorderStatus]:
    return list(RecorderStatus.objects.order_by("cluster"))


def audit_counts() -> dict[tuple[str, str], int]:
    """Events per (action, outcome). The log only grows and is chained (each row's hash covers every row before
    it), so counts up to a sequence number stay right for as long as the row there keeps its hash: a scrape counts
    only the rows appended since the last one, in an index range, instead of a log that grows for years. A
    sequence number is taken only after the one before it is committed, so no row below the head can appear later."""
    global _audit_counted
    with _audit_lock:
        seq, hash_, counts = _audit_counted
        head = AuditEvent.objects.order_by("-seq").values_list("seq", "hash").first()
        if head is None:
            _audit_counted = (0, "", {})
            return {}
        if head == (seq, hash_):
            return counts
        if not (seq and head[0] > seq and AuditEvent.objects.filter(seq=seq, hash=hash_).exists()):
            seq, counts = 0, {}  # another log (a new database, a test's rollback): count it from the start
        # order_by() drops the model's ordering, which would otherwise split the groups.
        new = (AuditEvent.objects.filter(seq__gt=seq, seq__lte=head[0]).order_by().values("action", "outcome")
               .annotate(n=Count("id")).values_list("action", "outcome", "n"))
        counts = dict(counts)
        for action, outcome, n in new:
            counts[(action, outcome)] = counts.get((action, outcome), 0) + n
        _audit_counted = (head[0], head[1], counts)
        return counts


def replay_counts() -> dict[str, int]:
    counts = dict(ReplayJob.objects.order_by().values("state").annotate(n=Count("id")).values_list("state", "n"))
    return {state: counts.get(state, 0) for state in ReplayJob.State.values}
