"""Burrow-style consumer status from a short window of lag samples (pure logic, no Kafka, no database).

Per partition, over the samples in the window since the committed offset last moved backwards (a reset):
- OK    the lag touched zero, or it went down at least once while the group committed;
- WARN  the group committed, but the lag never went down and ended higher than it started (falling behind);
- ERR   the committed offset did not move while there was lag, yet the group still commits (the recorder saw a
        commit within the window) or, without the recorder's word, has members: stalled, e.g. a poison record or
        a stuck thread;
- STOP  the committed offset did not move while there was lag, and nobody commits: the last commit the recorder
        saw is older than the window or, without it, the group has no members.
- BLOCKED  the committed offset sits still at the partition's last stable offset while the log end is ahead: a
        read_committed consumer waiting for an open transaction to end, not a consumer falling behind.
The group takes its worst partition's status (OK < WARN < BLOCKED < STOP < ERR: a live group that does not progress is the
one to wake up for). Fewer than MIN_SAMPLES samples: no status yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OK, WARN, ERR, STOP, BLOCKED = "OK", "WARN", "ERR", "STOP", "BLOCKED"
SEVERITY = {"": 0, OK: 1, WARN: 2, BLOCKED: 3, STOP: 4, ERR: 5}
MIN_SAMPLES = 3


@dataclass(frozen=True)
class PartitionVerdict:
    key: str  # "topic-partition"
    status: str
    reason: str
    lag: int


@dataclass(frozen=True)
class GroupVerdict:
    status: str  # "" while collecting
    reason: str
    partitions: dict[str, str] = field(default_factory=dict)  # key → status, for partitions not OK


def window_append(window: dict, time_s: float, observed: dict[str, tuple[int, ...]], size: int) -> dict:
    """The window with one more sample (committed, end and, when known, the last stable offset per partition),
    keeping the newest `size`. Runs for every committed partition of every sweep: kept to plain list operations."""
    times = window.get("times", [])
    old = window.get("partitions", {})
    partitions = {}
    for key, series in old.items():
        point = observed.get(key)
        series = series + [None if point is None else list(point)]
        if len(series) > size:
            series = series[-size:]
        if point is not None or any(v is not None for v in series):
            partitions[key] = series
    padding = min(len(times), size - 1)
    for key, point in observed.items():
        if key not in old:
            partitions[key] = [None] * padding + [list(point)]
    return {"times": (times + [time_s])[-size:], "partitions": partitions}


def _since_rewind(points: list[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    start = 0
    for i in range(1, len(points)):
        if points[i][1] < points[i - 1][1]:
            start = i
    return points[start:]


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def _blocked(points: list[tuple]) -> bool:
    """At the last stable offset with more log beyond it, and not moving since the sample before."""
    newest, before = points[-1], points[-2]
    if len(newest) < 4 or newest[3] is None:
        return False
    _, committed, end, stable = newest[:4]
    return committed == stable < end and before[1] == committed


def partition_verdict(key: str, points: list[tuple], *, has_members: bool,
                      last_commit_s: float | None, now_s: float) -> PartitionVerdict | None:
    """points: (time, committed, end[, last stable offset]), oldest first. None while there are too few samples."""
    points = _since_rewind(points)
    if len(points) < MIN_SAMPLES:
        return None
    lags = [max(0, p[2] - p[1]) for p in points]
    if _blocked(points):
        committed, end = points[-1][1], points[-1][2]
        return PartitionVerdict(key, BLOCKED, f"{key}: waiting at the last stable offset {committed:,} behind an "
                                              f"open transaction ({end - committed:,} offsets held back)", lags[-1])
    span = points[-1][0] - points[0][0]
    if min(lags) == 0:
        return PartitionVerdict(key, OK, "caught up in the window", lags[-1])
    if points[-1][1] == points[0][1]:
        # The recorder's commit time says best whether anyone still commits (a group that only assign()s, like
        # Spark or Flink, has no members yet commits); without it, no members means nobody does.
        stopped = now_s - last_commit_s > span if last_commit_s is not None else not has_members
        if stopped:
            why = f"no commit for {_minutes(now_s - last_commit_s)}" if last_commit_s is not None else "no members"
            return PartitionVerdict(key, STOP, f"{key}: {why}, committed offset {points[-1][1]:,} with lag "
                                               f"{lags[-1]:,}", lags[-1])
        return PartitionVerdict(key, ERR, f"{key}: committed offset {points[-1][1]:,} has not moved for "
                                          f"{_minutes(span)} with lag {lags[-1]:,}", lags[-1])
    falling_behind = all(b >= a for a, b in zip(lags, lags[1:])) and lags[-1] > lags[0]
    if falling_behind:
        return PartitionVerdict(key, WARN, f"{key}: lag grew from {lags[0]:,} to {lags[-1]:,} over "
                                           f"{_minutes(span)} while committing", lags[-1])
    return PartitionVerdict(key, OK, "consuming", lags[-1])


def group_verdict(window: dict, *, has_members: bool, last_commit_s: float | None, now_s: float) -> GroupVerdict:
    """The worst partition verdict of the group's window; ties go to the partition with the most lag."""
    times = window.get("times", [])
    verdicts = []
    for key, series in window.get("partitions", {}).items():
        offset = len(times) - len(series)
        points = [(times[offset + i], *v) for i, v in enumerate(series) if v is not None]
        verdict = partition_verdict(key, points, has_members=has_members, last_commit_s=last_commit_s, now_s=now_s)
        if verdict is not None:
            verdicts.append(verdict)
    if not verdicts:
        return GroupVerdict("", "collecting samples" if window.get("partitions") else "no committed offsets")
    worst = max(verdicts, key=lambda v: (SEVERITY[v.status], v.lag))
    bad = {v.key: v.status for v in verdicts if v.status != OK}
    if worst.status == OK:
        return GroupVerdict(OK, f"{len(verdicts)} partition{'s' if len(verdicts) != 1 else ''} consuming or caught up")
    others = len(bad) - 1
    reason = worst.reason + (f" (and {others} more partition{'s' if others != 1 else ''} not OK)" if others else "")
    return GroupVerdict(worst.status, reason, bad)


def window_totals(window: dict) -> list[int | None]:
    """Total lag at each sample of the window (for a sparkline)."""
    times = window.get("times", [])
    totals: list[int | None] = [None] * len(times)
    for series in window.get("partitions", {}).values():
        offset = len(times) - len(series)
        for i, v in enumerate(series):
            if v is not None:
                totals[offset + i] = (totals[offset + i] or 0) + max(0, v[1] - v[0])
    return totals
