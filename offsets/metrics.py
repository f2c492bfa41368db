"""The consumer-group families of /metrics: lag, status and rebalances per group, and how the lag sampler and the
recorder are doing per cluster. Registered from OffsetsConfig.ready(); a fixed handful of queries however many
groups and clusters there are.

Cardinality: lag per cluster, group and topic; status and rebalances per cluster and group, for the groups each
cluster's latest lag sweep listed. Per partition only when the scrape asks (`?partitions=1`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from operator import or_

from django.db.models import Count, Exists, OuterRef, Q
from prometheus_client.core import Metric

from console.metrics.sources import ScrapeOptions, counter, gauge
from offsets.lag.status import SEVERITY
from offsets.lag.window import LagWindow
from offsets.models import GroupGeneration, GroupLagStatus, LagSample, LagSweep, RecorderStatus

RECORDER_STATES = (RecorderStatus.RECORDING, RecorderStatus.SAMPLING, RecorderStatus.WAITING, RecorderStatus.STOPPED)
# "" is the sampler's "collecting samples" (or "no committed offsets"): no verdict yet, below OK.
STATUS_HELP = ", ".join(f"{value} {name or 'collecting'}"
                        for name, value in sorted(SEVERITY.items(), key=lambda item: item[1]))


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


def group_windows() -> list[tuple[str, str, bytes]]:
    """(cluster, group, window): the per-partition samples behind each status (only read when partitions are asked)."""
    return list(GroupLagStatus.objects.order_by().values_list("cluster", "group", "window"))


def group_rebalances() -> list[tuple[str, str, int]]:
    """(cluster, group, generations recorded) for the groups the latest sweep listed. History is kept for groups
    long deleted; counting only current ones keeps the number of series that of the live groups."""
    listed = GroupLagStatus.objects.filter(cluster=OuterRef("cluster"), group=OuterRef("group"))
    rows = (GroupGeneration.objects.filter(Exists(listed)).order_by().values("cluster", "group")
            .annotate(n=Count("id")).values_list("cluster", "group", "n"))
    return list(rows)


def group_metrics(options: ScrapeOptions) -> Iterator[Metric]:
    now = time.time()
    sweeps = lag_sweeps()
    yield from _groups(sweeps)
    if options.partitions:
        yield _partition_lag()
    yield from _sampler(sweeps)
    yield from _recorder(now)


def _groups(sweeps: list[SweepState]) -> Iterator[Metric]:
    lag = gauge("group_lag", "Records the group has not consumed yet on the topic, summed over the partitions "
                             "it committed, at the cluster's newest lag sweep.", ["cluster", "group", "topic"])
    for cluster, group, topic, value in newest_group_lag(sweeps):
        lag.add_metric([cluster, group, topic], value)
    yield lag
    status = gauge("group_status", f"Lag status of the group as a severity: {STATUS_HELP}.", ["cluster", "group"])
    for cluster, group, value in group_statuses():
        status.add_metric([cluster, group], SEVERITY.get(value, 0))
    yield status
    rebalances = counter("group_rebalances_total", "Generations (classic protocol) or assignment epochs (consumer "
                         "protocol) of the group that the recorder stored.", ["cluster", "group"])
    for cluster, group, n in group_rebalances():
        rebalances.add_metric([cluster, group], n)
    yield rebalances


def _partition_lag() -> Metric:
    lag = gauge("group_partition_lag", "Records the group has not consumed yet on one partition, at the "
                                       "cluster's newest lag sweep.", ["cluster", "group", "topic", "partition"])
    for cluster, group, window in group_windows():
        # A partition without a point at the newest sweep (not committed, or its leader silent) is left out.
        for key, committed, end in LagWindow.from_bytes(window).newest():
            topic, _, partition = key.rpartition("-")
            lag.add_metric([cluster, group, topic, partition], max(0, end - committed))
    return lag


def _sampler(sweeps: list[SweepState]) -> Iterator[Metric]:
    duration = gauge("lag_sampler_duration_seconds", "How long the last successful lag sweep took.", ["cluster"])
    success = gauge("lag_sampler_last_success_timestamp_seconds", "When the last successful lag sweep ran.",
                    ["cluster"])
    error = gauge("lag_sampler_last_error_timestamp_seconds", "When a lag sweep last failed.", ["cluster"])
    groups = gauge("lag_sampler_groups", "Groups the last successful lag sweep listed.", ["cluster"])
    partitions = gauge("lag_sampler_partitions", "Committed partitions the last successful lag sweep measured.",
                       ["cluster"])
    skipped = gauge("lag_sampler_skipped_groups", "Groups the last successful lag sweep listed but had no time "
                                                  "(or no answer) for; they keep their earlier status.", ["cluster"])
    for sweep in sweeps:
        if sweep.last_ok_at is not None:
            success.add_metric([sweep.cluster], sweep.last_ok_at.timestamp())
            duration.add_metric([sweep.cluster], sweep.duration_ms / 1000)
            groups.add_metric([sweep.cluster], sweep.groups)
            partitions.add_metric([sweep.cluster], sweep.partitions)
            skipped.add_metric([sweep.cluster], sweep.skipped_groups)
        if sweep.last_error_at is not None:
            error.add_metric([sweep.cluster], sweep.last_error_at.timestamp())
    yield from (duration, success, error, groups, partitions, skipped)


def _recorder(now: float) -> Iterator[Metric]:
    behind = gauge("recorder_behind_records", "Offsets of __consumer_offsets the recorder has not read yet, "
                                              "as of its last look at their ends.", ["cluster"])
    age = gauge("recorder_behind_seconds", "Seconds since the time up to which the recorder's rebalance "
                                           "history is complete.", ["cluster"])
    state = gauge("recorder_state", "The recorder's state: 1 for the current one of "
                                    f"{', '.join(RECORDER_STATES)}, 0 for the others.", ["cluster", "state"])
    for status in RecorderStatus.objects.order_by("cluster"):
        if status.behind_records is not None:
            behind.add_metric([status.cluster], status.behind_records)
        if status.recorded_up_to is not None:
            age.add_metric([status.cluster], max(0.0, now - status.recorded_up_to.timestamp()))
        for name in RECORDER_STATES:
            state.add_metric([status.cluster, name], 1 if status.state == name else 0)
    yield from (behind, age, state)
