"""The group page's one truth: status, its time, total lag, trend and reasons, every one of them from the group's
last sample (the row the sweep, or a re-check after a change made here, stored), and what happened since.

The groups list shows the same row's status and total, and the lag chart's last point is the same sample's, so the
figures agree by construction. Offsets read live on the page may have moved since: when the sample cannot explain
them (a committed offset went back, or changed while nobody consumes) or the audit log has a change made here after
the sample, the page says the status is being re-checked instead of showing it as if it were current.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from console.audit.models import AuditEvent
from offsets.lag.status import SEVERITY
from offsets.lag.trend import LagSeries, Trend, judge_trend
from offsets.lag.window import LagWindow
from offsets.models import GroupLagStatus

CHANGES_SHOWN = 5
PARTITIONS_NAMED = 12  # per status in the reasons; the partitions tab names them all


@dataclass(frozen=True)
class Problem:
    """The partitions of one status (not OK), by name."""

    status: str
    keys: tuple[str, ...]

    @property
    def named(self) -> tuple[str, ...]:
        return self.keys[:PARTITIONS_NAMED]

    @property
    def unnamed(self) -> int:
        return max(0, len(self.keys) - PARTITIONS_NAMED)


@dataclass(frozen=True)
class GroupLagState:
    status: str  # OK, WARN, BLOCKED, STOP, ERR, or "" while not judged
    reason: str
    lag: int | None  # total lag at the sample
    sampled_at: datetime | None
    problems: tuple[Problem, ...] = ()  # worst first
    partitions: dict[str, str] = field(default_factory=dict)  # "topic-partition" -> status, for those not OK
    trend: Trend | None = None
    changes: tuple[AuditEvent, ...] = ()  # changes made here to the group after the sample
    moved: tuple[str, ...] = ()  # partitions whose live committed offset the sample does not explain

    @property
    def stale(self) -> bool:
        return bool(self.changes or self.moved)


def _partition_order(key: str) -> tuple[str, int]:
    topic, _, number = key.rpartition("-")
    return (topic, int(number)) if number.isdigit() else (key, -1)


def problems_of(partitions: dict[str, str]) -> tuple[Problem, ...]:
    """The partitions not OK grouped by status, the worst status first, partitions in topic and number order."""
    by_status: dict[str, list[str]] = {}
    for key, status in partitions.items():
        by_status.setdefault(status, []).append(key)
    return tuple(Problem(status, tuple(sorted(keys, key=_partition_order)))
                 for status, keys in sorted(by_status.items(), key=lambda item: -SEVERITY.get(item[0], 0)))


def unexplained_moves(sampled: dict[str, int], live: dict[str, int | None], *, has_members: bool) -> tuple[str, ...]:
    """Partitions whose committed offset now is not where consuming from the sample's would have taken it: moved
    back (a reset), gone (deleted offsets), or moved at all while the group has no members to consume."""
    moved = []
    for key, then in sampled.items():
        now = live.get(key)
        if now is None or now < then or (now != then and not has_members):
            moved.append(key)
    return tuple(sorted(moved, key=_partition_order))


def _newest_committed(window: LagWindow) -> dict[str, int]:
    return {key: committed for key, committed, _ in window.newest()}


def group_lag_state(cluster: str, group: str, *, live: dict[str, int | None] | None = None,
                    has_members: bool = True) -> GroupLagState:
    """The group's last sample, judged, with the changes since: those audited here after it and, given the
    committed offsets read now (`live`: "topic-partition" -> offset), those the sample cannot explain."""
    row = GroupLagStatus.objects.filter(cluster=cluster, group=group).first()
    if row is None:
        return GroupLagState(status="", reason="not sampled yet", lag=None, sampled_at=None)
    window = row.lag_window
    moved = unexplained_moves(_newest_committed(window), live, has_members=has_members) if live is not None else ()
    changes = ()
    if row.sampled_at is not None:
        changes = tuple(AuditEvent.objects.filter(cluster=cluster, target=f"group:{group}",
                                                  created_at__gt=row.sampled_at,
                                                  outcome=AuditEvent.Outcome.SUCCESS)
                        .order_by("-seq")[:CHANGES_SHOWN])
    return GroupLagState(status=row.status, reason=row.reason, lag=row.totals[-1] if row.totals else None,
                         sampled_at=row.sampled_at, problems=problems_of(row.partition_status),
                         partitions=dict(row.partition_status),
                         trend=judge_trend(row.status, LagSeries.from_window(window)), changes=changes, moved=moved)
