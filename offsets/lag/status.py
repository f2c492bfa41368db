"""Burrow-style consumer status from a short window of lag samples (pure logic, no Kafka, no database).

Per partition, over the samples in the window since the committed offset last moved backwards (a reset):
- OK    the lag touched zero, or it went down at least once while the group committed;
- WARN  the group committed, but the lag never went down and ended higher than it started (falling behind);
- ERR   the committed offset did not move while there was lag, yet the group still commits (the recorder saw a
        commit within the window, and not long before the rest of it) or, without the recorder's word, has
        members: stalled, e.g. a poison record or a stuck thread;
- STOP  there was lag and nobody commits. With the recorder's last commit time, Burrow's rule: the group has been
        silent for longer than the part of the window before its last commit (so also a group that consumed for
        part of the window and then stopped); without it, the committed offset did not move and the group has
        no members.
- BLOCKED  the committed offset sits still at the partition's last stable offset while the log end is ahead: a
        read_committed consumer waiting for an open transaction to end, not a consumer falling behind.
The group takes its worst partition's status (OK < WARN < BLOCKED < STOP < ERR: a live group that does not progress is the
one to wake up for). Fewer than MIN_SAMPLES samples: no status yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import sub

from offsets.lag.window import NONE, LagWindow

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


def _since_rewind(committed: list[int]) -> int:
    """Index of the first point after the committed offset last moved backwards (a reset), 0 when it never did."""
    if committed == sorted(committed):
        return 0
    start = 0
    for i in range(1, len(committed)):
        if committed[i] < committed[i - 1]:
            start = i
    return start


OTHERS_NAMED = 5


def others_not_ok(keys: list[str]) -> str:
    """The group reason's tail naming the other partitions not OK: " (also not OK: t-1, t-4 and 3 more)"."""
    if not keys:
        return ""
    named = ", ".join(keys[:OTHERS_NAMED])
    rest = len(keys) - OTHERS_NAMED
    return f" (also not OK: {named}{f' and {rest} more' if rest > 0 else ''})"


def minutes_text(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def _silent_longer_than_it_committed(times: list[float], committed: list[int], last_commit_s: float,
                                     now_s: float) -> bool:
    """Burrow's stop rule over a window whose committed offset moved: the group has been silent for longer than
    the part of the window in which it committed. Its last commit was no earlier than the sample before the
    committed offset last moved, whatever a recorder that is behind says."""
    changed = max(i for i in range(1, len(committed)) if committed[i] != committed[i - 1])
    last = max(last_commit_s, times[changed - 1])
    return now_s - last > last - times[0]


def partition_verdict(key: str, points: list[tuple], *, has_members: bool,
                      last_commit_s: float | None, now_s: float) -> PartitionVerdict | None:
    """points: (time, committed, end[, last stable offset]), oldest first. None while there are too few samples."""
    stables = [p[3] if len(p) > 3 and p[3] is not None else NONE for p in points]
    return columns_verdict(key, [p[0] for p in points], [p[1] for p in points], [p[2] for p in points], stables,
                           has_members=has_members, last_commit_s=last_commit_s, now_s=now_s)


def columns_verdict(key: str, times: list[float], committed: list[int], ends: list[int], stables: list[int], *,
                    has_members: bool, last_commit_s: float | None, now_s: float) -> PartitionVerdict | None:
    """partition_verdict over columns (a stable of NONE is unknown): what a sweep runs for every partition."""
    start = _since_rewind(committed)
    if start:
        times, committed, ends, stables = times[start:], committed[start:], ends[start:], stables[start:]
    if len(committed) < MIN_SAMPLES:
        return None
    lags = [lag if lag > 0 else 0 for lag in map(sub, ends, committed)]
    newest_committed, newest_lag = committed[-1], lags[-1]
    stable = stables[-1]
    # Blocked: at the last stable offset with more log beyond it, and not moving since the sample before.
    if stable != NONE and newest_committed == stable < ends[-1] and committed[-2] == newest_committed:
        return PartitionVerdict(key, BLOCKED, f"{key}: waiting at the last stable offset {newest_committed:,} behind "
                                              f"an open transaction ({ends[-1] - newest_committed:,} offsets held back)",
                                newest_lag)
    span = times[-1] - times[0]
    if min(lags) == 0:
        return PartitionVerdict(key, OK, "caught up in the window", newest_lag)
    still = newest_committed == committed[0]
    # The recorder's commit time says best whether anyone still commits (a group that only assign()s, like Spark or
    # Flink, has no members yet commits); without it, no members means nobody does, judged on a still window only.
    if last_commit_s is not None:
        stopped = now_s - last_commit_s > last_commit_s - times[0] if still else \
            _silent_longer_than_it_committed(times, committed, last_commit_s, now_s)
    else:
        stopped = still and not has_members
    if stopped:
        why = f"no commit for {minutes_text(now_s - last_commit_s)}" if last_commit_s is not None else "no members"
        return PartitionVerdict(key, STOP, f"{key}: {why}, committed offset {newest_committed:,} with lag "
                                           f"{newest_lag:,}", newest_lag)
    if still:
        return PartitionVerdict(key, ERR, f"{key}: committed offset {newest_committed:,} has not moved for "
                                          f"{minutes_text(span)} with lag {newest_lag:,}", newest_lag)
    falling_behind = lags == sorted(lags) and newest_lag > lags[0]
    if falling_behind:
        return PartitionVerdict(key, WARN, f"{key}: lag grew from {lags[0]:,} to {newest_lag:,} over "
                                           f"{minutes_text(span)} while committing", newest_lag)
    return PartitionVerdict(key, OK, "consuming", newest_lag)


def group_verdict(window: LagWindow, *, has_members: bool, last_commit_s: float | None,
                  now_s: float) -> GroupVerdict:
    """The worst partition verdict of the group's window; ties go to the partition with the most lag."""
    verdicts = []
    for k, key in enumerate(window.keys):
        verdict = columns_verdict(key, *window.columns(k), has_members=has_members, last_commit_s=last_commit_s,
                                  now_s=now_s)
        if verdict is not None:
            verdicts.append(verdict)
    if not verdicts:
        return GroupVerdict("", "collecting samples" if window.keys else "no committed offsets")
    worst = max(verdicts, key=lambda v: (SEVERITY[v.status], v.lag))
    bad = {v.key: v.status for v in verdicts if v.status != OK}
    if worst.status == OK:
        return GroupVerdict(OK, f"{len(verdicts)} partition{'s' if len(verdicts) != 1 else ''} consuming or caught up")
    return GroupVerdict(worst.status, worst.reason + others_not_ok([k for k in bad if k != worst.key]), bad)
