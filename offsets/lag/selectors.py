"""Reads of the lag history: charts per group and per topic, and statuses for the groups list."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import Q

from console.audit.models import AuditEvent
from console.audit.links import audit_event_url, audit_span_url
from offsets.lag.chart import ChartGeometry, chart_geometry, sparkline, with_span_links
from offsets.lag.last_total import LastTotal
from offsets.models import GroupGeneration, GroupLagStatus, LagSample, LagSweep

RANGES = {"1h": 3600, "6h": 6 * 3600, "24h": 86400, "3d": 3 * 86400, "7d": 7 * 86400, "30d": 30 * 86400}
DEFAULT_RANGE = "6h"  # for a range the chart does not know; no range at all fits the samples there are
FIT_RANGE = "fit"
FIT_MIN_S = 15 * 60
FIT_MARGIN = 1.05  # the first sample a little in from the left edge
RESET_POINTS_PER_TOPIC = 24  # "reset to here" points: enough to aim with, few enough to Tab through
TOPIC_CHART_GROUPS = 8  # the groups with most lag now; more lines than colours would not be readable


def step_for(range_s: int) -> int:
    """The finest step whose retention covers the range (the coarsest if none does)."""
    steps = sorted(settings.LAG_RETENTION_S.items())
    for step, keep_s in steps:
        if keep_s >= range_s:
            return step
    return steps[-1][0]


@dataclass(frozen=True)
class LagChart:
    range_key: str
    ranges: tuple[str, ...]
    step: int
    geometry: ChartGeometry
    has_data: bool
    label: str  # what the chart shows, for screen readers
    sample_interval_s: int
    range_s: int = 0  # the frame's length: RANGES[range_key], or what the fit chose

    @property
    def range_label(self) -> str:
        minutes = self.range_s // 60
        return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h" if minutes < 2 * 1440 else \
            f"{minutes // 1440} d"

    @property
    def step_label(self) -> str:
        if not self.step:
            return "every sample"
        minutes = self.step // 60
        return "hourly buckets" if minutes == 60 else f"{minutes}-minute buckets"


def _range_key(value: str | None) -> str:
    return value if value in RANGES else DEFAULT_RANGE


def fitted_range_s(first_sample: datetime | None, now: datetime) -> int:
    """The frame from the first sample to now (a little wider, at least FIT_MIN_S, at most the longest range), so
    five minutes of samples fill the chart instead of a sliver of a 6-hour one. Without samples: DEFAULT_RANGE."""
    if first_sample is None:
        return RANGES[DEFAULT_RANGE]
    span = (now - first_sample).total_seconds() * FIT_MARGIN
    return int(min(max(RANGES.values()), max(FIT_MIN_S, math.ceil(span / 60) * 60)))


def _frame(range_key: str | None, now: datetime, **match) -> tuple[str, int]:
    """The chart's range key and its length: a known key as asked; none fits the first sample of `match`."""
    if range_key:
        key = _range_key(range_key)
        return key, RANGES[key]
    since = now - timedelta(seconds=max(RANGES.values()))
    first = (LagSample.objects.filter(time__gte=since, time__lte=now, **match).order_by("time")
             .values_list("time", flat=True).first())
    return FIT_RANGE, fitted_range_s(first, now)


def _samples(cluster: str, step: int, start: datetime, **match) -> list[tuple[str, str, datetime, int, int, int]]:
    """(group, topic, time, plotted lag, committed, end) from `start`, at `step`, with the raw samples newer than
    the last rolled-up bucket appended so a coarse chart still reaches now. Buckets plot their highest lag."""
    fields = ("group", "topic", "time", "lag_max", "committed", "end")
    rows = list(LagSample.objects.filter(cluster=cluster, step=step, time__gte=start, **match)
                .order_by("time").values_list(*fields))
    if step:
        sweep = LagSweep.objects.filter(cluster=cluster).first()
        rolled = (sweep.rolled_until.get(str(step)) if sweep else None)
        tail_from = max(start, datetime.fromtimestamp(rolled, UTC)) if rolled else start
        rows += LagSample.objects.filter(cluster=cluster, step=0, time__gte=tail_from, **match) \
            .order_by("time").values_list(*fields)
    return rows


def _gap_s(step: int) -> float:
    return 2.5 * (step or settings.LAG_SAMPLE_INTERVAL_S)


def group_lag_chart(cluster: str, group: str, range_key: str | None = None, *,
                    now: datetime | None = None) -> LagChart:
    """The group's lag per topic (and in total when it reads several), with its rebalances and the changes made
    to it from the console marked on the time axis."""
    now = now or datetime.now(UTC)
    range_key, range_s = _frame(range_key, now, cluster=cluster, group=group)
    start = now - timedelta(seconds=range_s)
    step = step_for(range_s)
    rows = _samples(cluster, step, start, group=group)
    per_topic: dict[str, list[tuple[float, int]]] = defaultdict(list)
    total: dict[float, int] = defaultdict(int)
    for _, topic, at, lag, _, _ in rows:
        per_topic[topic].append((at.timestamp(), lag))
        total[at.timestamp()] += lag
    series = sorted(per_topic.items())
    if len(series) > 1:
        series = [("all topics", sorted(total.items()))] + series
    markers = [(g.time.timestamp(), f"rebalance: {'epoch' if g.protocol == 'consumer' else 'generation'} "
                                    f"{g.generation}, {len(g.members)} member{'s' if len(g.members) != 1 else ''}")
               for g in GroupGeneration.objects.filter(cluster=cluster, group=group, time__gte=start)[:500]]
    markers += _audit_markers(cluster, f"group:{group}", start)
    geometry = _span_links(chart_geometry(series, start_s=start.timestamp(), end_s=now.timestamp(),
                                          gap_s=_gap_s(step), markers=markers, pointed=set(per_topic),
                                          points_per_series=RESET_POINTS_PER_TOPIC), cluster, f"group:{group}")
    return LagChart(range_key=range_key, ranges=tuple(RANGES), step=step, geometry=geometry, has_data=bool(rows),
                    label=f"Lag of {group}",
                    sample_interval_s=settings.LAG_SAMPLE_INTERVAL_S, range_s=range_s)


def topic_lag_chart(cluster: str, topic: str, range_key: str | None = None, *,
                    now: datetime | None = None) -> LagChart:
    """Lag on this topic of the groups reading it: the TOPIC_CHART_GROUPS with most lag in the latest sample."""
    now = now or datetime.now(UTC)
    range_key, range_s = _frame(range_key, now, cluster=cluster, topic=topic)
    start = now - timedelta(seconds=range_s)
    step = step_for(range_s)
    recent = now - timedelta(seconds=3 * settings.LAG_SAMPLE_INTERVAL_S)
    latest = (LagSample.objects.filter(cluster=cluster, topic=topic, step=0, time__gte=recent)
              .order_by("group", "-time").values_list("group", "lag"))
    lag_now: dict[str, int] = {}
    for group, lag in latest:
        lag_now.setdefault(group, lag)
    if lag_now:
        groups = sorted(lag_now, key=lambda g: (-lag_now[g], g))[:TOPIC_CHART_GROUPS]
    else:  # nothing sampled lately: show whoever read the topic in the range
        groups = sorted(set(LagSample.objects.filter(cluster=cluster, topic=topic, step=step, time__gte=start)
                            .values_list("group", flat=True)))[:TOPIC_CHART_GROUPS]
    rows = _samples(cluster, step, start, topic=topic, group__in=groups)
    per_group: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for group, _, at, lag, _, _ in rows:
        per_group[group].append((at.timestamp(), lag))
    geometry = _span_links(chart_geometry(sorted(per_group.items()), start_s=start.timestamp(),
                                          end_s=now.timestamp(), gap_s=_gap_s(step),
                                          markers=_audit_markers(cluster, f"topic:{topic}", start)),
                           cluster, f"topic:{topic}")
    return LagChart(range_key=range_key, ranges=tuple(RANGES), step=step, geometry=geometry, has_data=bool(rows),
                    label=f"Lag of the groups reading {topic}",
                    sample_interval_s=settings.LAG_SAMPLE_INTERVAL_S, range_s=range_s)


def group_lag_history(cluster: str, group: str, range_key: str | None = None, *,
                      now: datetime | None = None) -> dict:
    """The group's lag samples over a range, oldest first, at the chart's step, with its current status: what
    `manage.py lag_history` prints."""
    now = now or datetime.now(UTC)
    range_key = _range_key(range_key)
    step = step_for(RANGES[range_key])
    rows = _samples(cluster, step, now - timedelta(seconds=RANGES[range_key]), group=group)
    status = GroupLagStatus.objects.filter(cluster=cluster, group=group).first()
    return {
        "group": group, "cluster": cluster, "range": range_key, "step_s": step,
        "status": status.status if status else "", "reason": status.reason if status else "not sampled yet",
        "samples": [{"time": at.isoformat().replace("+00:00", "Z"), "topic": topic, "lag": lag, "committed": committed,
                     "end": end} for _, topic, at, lag, committed, end in rows],
    }


def _audit_markers(cluster: str, target: str, start: datetime) -> list[tuple[float, str, str]]:
    events = AuditEvent.objects.filter(cluster=cluster, target=target, created_at__gte=start,
                                       outcome=AuditEvent.Outcome.SUCCESS).order_by("seq")[:200]
    return [(e.created_at.timestamp(), f"#{e.seq} {e.action} by {e.actor_name}", audit_event_url(e.seq))
            for e in events]


def _span_links(geometry: ChartGeometry, cluster: str, target: str) -> ChartGeometry:
    return with_span_links(geometry, lambda first_s, last_s: audit_span_url(cluster=cluster, first_s=first_s,
                                                                            last_s=last_s, target=target))


@dataclass(frozen=True)
class GroupStatusView:
    status: str
    reason: str
    spark: str  # sparkline points of the total lag over the status window
    partitions: dict[str, str]
    lag: int | None  # total lag at the last sample
    sampled_at: datetime | None = None  # when the sweep last sampled the group


@dataclass(frozen=True)
class SamplerHealth:
    last_ok_at: datetime | None
    last_error: str
    stale: bool  # no successful sample for three intervals: beat or the worker is not running
    skipped_groups: int = 0  # listed by the last successful sweep but not sampled (see skipped_reason)
    skipped_reason: str = ""


def group_statuses(cluster: str, *, group: str | None = None,
                   groups: list[str] | None = None) -> dict[str, GroupStatusView]:
    """Status per group from the latest sweep (one query, without the windows): of every group, of one, or of
    the `groups` a page shows."""
    rows = GroupLagStatus.objects.filter(cluster=cluster).defer("window")
    if group is not None:
        rows = rows.filter(group=group)
    if groups is not None:
        rows = rows.filter(group__in=groups)
    return {s.group: GroupStatusView(status=s.status, reason=s.reason, spark=sparkline(s.totals),
                                     partitions=s.partition_status, lag=s.totals[-1] if s.totals else None,
                                     sampled_at=s.sampled_at)
            for s in rows}


def sampled_topics(cluster: str, sampled_at: dict[str, datetime]) -> dict[str, tuple[str, ...]]:
    """The topics each group had committed offsets on at its last sample (`sampled_at`: group -> when), in one
    query over the raw samples of those moments."""
    if not sampled_at:
        return {}
    moments = Q()
    for group, at in sampled_at.items():
        moments |= Q(group=group, time=at)
    topics: dict[str, set[str]] = defaultdict(set)
    for group, topic in LagSample.objects.filter(moments, cluster=cluster, step=0).values_list("group", "topic"):
        topics[group].add(topic)
    return {group: tuple(sorted(names)) for group, names in topics.items()}


@dataclass(frozen=True)
class GroupStatusBrief:
    status: str
    lag: int | None  # total lag at the last sample


def group_status_briefs(cluster: str) -> dict[str, GroupStatusBrief]:
    """What the groups list filters and orders on, for every group: the status and the last total lag only. With
    50,000 groups, building every group's reasons, partition statuses and sparkline took seconds a page."""
    rows = (GroupLagStatus.objects.filter(cluster=cluster).annotate(lag=LastTotal("totals"))
            .values_list("group", "status", "lag"))
    return {group: GroupStatusBrief(status, lag) for group, status, lag in rows.iterator(5000)}


def sampler_health(cluster: str, *, now: datetime | None = None) -> SamplerHealth:
    now = now or datetime.now(UTC)
    sweep = LagSweep.objects.filter(cluster=cluster).first()
    last_ok = sweep.last_ok_at if sweep else None
    failing = bool(sweep and sweep.last_error_at and (last_ok is None or sweep.last_error_at > last_ok))
    stale = last_ok is None or now - last_ok > timedelta(seconds=3 * settings.LAG_SAMPLE_INTERVAL_S)
    return SamplerHealth(last_ok_at=last_ok, last_error=sweep.last_error if failing else "", stale=stale,
                         skipped_groups=sweep.skipped_groups if sweep else 0,
                         skipped_reason=sweep.skipped_reason if sweep else "")
