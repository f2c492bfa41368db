"""The windows of a batch of groups as one set of arrays: what a sweep reads, extends, judges and writes.

A sweep at 50,000 groups extends and judges 200,000 partition windows every interval. Done a group at a time in
Python that was about a hundred microseconds a group (seconds of every sweep); here the windows of a batch are
stacked into (partitions × samples) arrays, so appending a sample and the Burrow-style rules of offsets/lag/status.py
run as a few array operations for the whole batch, and Python only touches each group to unpack its stored bytes,
look up what Kafka answered for it, and word the one reason its status shows.

The stored form of one window is LagWindow's (offsets/lag/window.py); the rules are status.py's, which the tests
hold this module to, partition by partition.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from offsets.lag.status import (BLOCKED, ERR, MIN_SAMPLES, OK, SEVERITY, STOP, WARN, GroupVerdict, minutes_text,
                                others_not_ok)
from offsets.lag.window import _FORMAT, _HEADER, NONE, WIDTH, LagWindow

_BY_SEVERITY = {level: status for status, level in SEVERITY.items()}
_NO_VERDICT = 0  # severity of "" (too few samples)


def _unpack(blob: bytes | memoryview | None) -> tuple[bytes, int, list[str], int]:
    """(body, width, keys, where its values start) of one stored window; an empty window for none."""
    if blob:
        body = zlib.decompress(blob)
        form, width, count = _HEADER.unpack_from(body)
        if form == _FORMAT:
            at = _HEADER.size + 8 * width
            (size,) = struct.unpack_from("<I", body, at)
            keys = body[at + 4:at + 4 + size].decode().split("\n") if count else []
            return body, width, keys, at + 4 + size
    return b"", 0, [], 0


class Sample:
    """What one sweep observed for a batch's groups, as columns: group index, partition key, committed, end and
    last stable offset (None when not known) per partition."""

    def __init__(self) -> None:
        self.groups: list[int] = []
        self.keys: list[str] = []
        self.committed: list[int] = []
        self.ends: list[int] = []
        self.stables: list[int] = []

    def add(self, group: int, key: str, committed: int, end: int, stable: int | None) -> None:
        self.groups.append(group)
        self.keys.append(key)
        self.committed.append(committed)
        self.ends.append(end)
        self.stables.append(NONE if stable is None else stable)


class WindowBatch:
    """The windows of `len(blobs)` groups, each right-aligned into `size` samples (missing samples are NONE, their
    times NaN), rows of one group contiguous."""

    def __init__(self, blobs: list[bytes | memoryview | None], size: int) -> None:
        self.size = size
        groups = len(blobs)
        self.times = np.full((groups, size), np.nan)
        keys: list[str] = []
        chunks: list[bytes] = []  # every row's values, size samples each, in row order
        owners: list[int] = []
        missing_sample = np.full(WIDTH, NONE, dtype="<i8").tobytes()
        for g, blob in enumerate(blobs):
            body, width, group_keys, at = _unpack(blob)
            if width:
                times = np.frombuffer(body, dtype="<f8", count=width, offset=_HEADER.size)
                kept = min(width, size)
                self.times[g, size - kept:] = times[width - kept:]
            if not group_keys:
                continue
            keys += group_keys
            owners += [g] * len(group_keys)
            if width == size:  # the steady state: the stored samples are the rows as they are
                chunks.append(body[at:])
                continue
            row = width * WIDTH * 8
            for k in range(len(group_keys)):
                series = body[at + k * row:at + (k + 1) * row]
                if width > size:
                    chunks.append(series[(width - size) * WIDTH * 8:])
                else:
                    chunks.append(missing_sample * (size - width) + series)
        self.keys = keys
        self.values = np.frombuffer(b"".join(chunks), dtype="<i8").reshape(len(keys), size, WIDTH).astype(np.int64)
        self.owner = np.array(owners, dtype=np.int64)

    def append(self, time_s: float, observed: list[dict[str, tuple]]) -> None:
        """One more sample for every group of the batch (observed[g]: key → (committed, end, stable or None)), the
        oldest falling out: a partition not observed gets a missing point, one missing from the whole window goes,
        one seen for the first time comes in after the group's others."""
        sample = Sample()
        for g, seen in enumerate(observed):
            for key, point in seen.items():
                sample.add(g, key, point[0], point[1], point[2] if len(point) > 2 else None)
        self.append_sample(time_s, sample)

    def append_sample(self, time_s: float, sample: Sample) -> None:
        """append() of what a sweep collected for the batch as flat columns (the sweep's own fast path)."""
        size, rows = self.size, len(self.keys)
        self.times[:, :-1] = self.times[:, 1:]
        self.times[:, -1] = time_s
        values = np.empty_like(self.values)
        values[:, :-1, :] = self.values[:, 1:, :]
        values[:, -1, :] = NONE
        existing = dict(zip(zip(self.owner.tolist(), self.keys), range(rows)))
        found = [existing.get(at, -1) for at in zip(sample.groups, sample.keys)]
        points = np.array((sample.committed, sample.ends, sample.stables), dtype=np.int64).T.reshape(-1, WIDTH)
        rows_seen = np.array(found, dtype=np.int64)
        old = rows_seen >= 0
        values[rows_seen[old], -1, :] = points[old]
        new = ~old
        if new.any():
            fresh = np.full((int(new.sum()), size, WIDTH), NONE, dtype=np.int64)
            fresh[:, -1, :] = points[new]
            values = np.concatenate((values, fresh))
            new_owner = np.array(sample.groups, dtype=np.int64)[new]
            owner = np.concatenate((self.owner, new_owner))
            keys = self.keys + [key for key, is_new in zip(sample.keys, new.tolist()) if is_new]
            # A group's partitions stay together: its new ones after its others (a stable sort keeps both orders).
            order = np.argsort(owner, kind="stable")
            values, owner, keys = values[order], owner[order], [keys[i] for i in order.tolist()]
        else:
            owner, keys = self.owner, self.keys
        kept = (values[:, :, 0] != NONE).any(axis=1)
        if kept.all():
            self.values, self.owner, self.keys = values, owner, keys
        else:
            self.values, self.owner = values[kept], owner[kept]
            self.keys = [key for key, keep in zip(keys, kept.tolist()) if keep]

    def _bounds(self) -> np.ndarray:
        """Row where each group's partitions start, and one past the last row."""
        return np.searchsorted(self.owner, np.arange(len(self.times) + 1))

    def blobs(self) -> list[bytes]:
        """Each group's window in LagWindow's stored form (leading samples that are no sample at all dropped)."""
        bounds = self._bounds().tolist()
        sampled = ~np.isnan(self.times)
        firsts = np.where(sampled.any(axis=1), np.argmax(sampled, axis=1), self.size).tolist()
        times = self.times.tobytes()
        values = self.values.astype("<i8", copy=False).tobytes()
        row, span = self.size * WIDTH * 8, self.size * 8
        out = []
        for g, first in enumerate(firsts):
            if first == 0:  # a full window: its times and rows as they lie in the batch
                out.append(LagWindow.pack_raw(times[g * span:(g + 1) * span], self.size,
                                              self.keys[bounds[g]:bounds[g + 1]],
                                              values[bounds[g] * row:bounds[g + 1] * row]))
            else:
                rows = slice(bounds[g], bounds[g + 1])
                out.append(LagWindow.pack(self.times[g, first:], self.keys[rows], self.values[rows, first:, :]))
        return out

    def window(self, g: int) -> LagWindow:
        """One group's window in its readable form."""
        return LagWindow.from_bytes(self.blobs()[g])

    def totals(self) -> list[list[int | None]]:
        """Per group, the total lag at each of its samples (None where no partition had a point)."""
        committed, ends = self.values[:, :, 0], self.values[:, :, 1]
        present = committed != NONE
        lags = np.where(present, np.maximum(ends - committed, 0), 0)
        bounds = self._bounds()
        # Rows of a group are contiguous: a group's sums are differences of running sums at its bounds.
        running = np.zeros((len(lags) + 1, self.size), dtype=np.int64)
        np.cumsum(lags, axis=0, out=running[1:])
        counted = np.zeros((len(lags) + 1, self.size), dtype=np.int64)
        np.cumsum(present, axis=0, out=counted[1:])
        sums = (running[bounds[1:]] - running[bounds[:-1]]).tolist()
        counts = (counted[bounds[1:]] - counted[bounds[:-1]]).tolist()
        sampled = (~np.isnan(self.times)).tolist()
        return [[s if n else None for s, n, taken in zip(sums[g], counts[g], sampled[g]) if taken]
                for g in range(len(self.times))]

    def verdicts(self, has_members: list[bool], last_commit_s: list[float | None],
                 now_s: float) -> list[GroupVerdict]:
        """status.group_verdict of every group of the batch, each partition judged by status.partition_verdict's
        rules over its points since the committed offset last moved backwards."""
        rows, size = self.values.shape[0], self.size
        if not rows:
            return [GroupVerdict("", "no committed offsets") for _ in range(len(self.times))]
        committed, ends, stables = self.values[:, :, 0], self.values[:, :, 1], self.values[:, :, 2]
        present = committed != NONE
        column = np.broadcast_to(np.arange(size), (rows, size))
        # The previous present point of each point (-1 for none): a reset shows as committed going below it.
        last_present = np.maximum.accumulate(np.where(present, column, -1), axis=1)
        before = np.full((rows, size), -1)
        before[:, 1:] = last_present[:, :-1]
        r = np.arange(rows)[:, None]
        rewound = present & (before >= 0) & (committed < committed[r, np.maximum(before, 0)])
        start = np.where(rewound.any(axis=1), size - 1 - np.argmax(rewound[:, ::-1], axis=1), 0)
        valid = present & (column >= start[:, None])
        count = valid.sum(axis=1)
        first = np.argmax(valid, axis=1)
        last = size - 1 - np.argmax(valid[:, ::-1], axis=1)
        rows_index = np.arange(rows)
        valid_before = np.maximum.accumulate(np.where(valid, column, -1), axis=1)
        previous = valid_before[rows_index, np.maximum(last - 1, 0)]
        lags = np.maximum(ends - committed, 0)
        newest_lag, first_lag = lags[rows_index, last], lags[rows_index, first]
        newest_committed = committed[rows_index, last]
        newest_end, newest_stable = ends[rows_index, last], stables[rows_index, last]
        caught_up = (np.where(valid, lags, 1).min(axis=1) == 0)
        # Lag never went down between consecutive points of the window (they may have gaps).
        prior = np.full((rows, size), -1)
        prior[:, 1:] = valid_before[:, :-1]
        went_down = valid & (prior >= 0) & (lags < lags[r, np.maximum(prior, 0)])
        growing = ~went_down.any(axis=1) & (newest_lag > first_lag)
        times = self.times[self.owner]
        span = times[rows_index, last] - times[rows_index, first]
        blocked = ((newest_stable != NONE) & (newest_committed == newest_stable) & (newest_stable < newest_end)
                   & (committed[rows_index, previous] == newest_committed))
        still = newest_committed == committed[rows_index, first]
        members = np.array(has_members, dtype=bool)[self.owner]
        commits = np.array([np.nan if t is None else t for t in last_commit_s], dtype=float)[self.owner]
        known = ~np.isnan(commits)
        # Where the committed offset moved, the group's last commit came after the point before its last move.
        moved = valid & (prior >= 0) & (committed != committed[r, np.maximum(prior, 0)])
        last_move = size - 1 - np.argmax(moved[:, ::-1], axis=1)
        before_move = times[rows_index, np.maximum(prior[rows_index, last_move], 0)]
        last_commit = np.where(known, commits, 0.0)
        last_commit = np.where(still, last_commit, np.maximum(last_commit, before_move))
        first_time = times[rows_index, first]
        stopped = np.where(known, (now_s - last_commit) > (last_commit - first_time), still & ~members)
        severity = np.select(
            [count < MIN_SAMPLES, blocked, caught_up, stopped, still, growing],
            [_NO_VERDICT, SEVERITY[BLOCKED], SEVERITY[OK], SEVERITY[STOP], SEVERITY[ERR], SEVERITY[WARN]],
            SEVERITY[OK])
        return _worded(self, severity, newest_lag, first_lag, newest_committed, newest_end, span, commits, now_s)


def _worded(batch: WindowBatch, severity, newest_lag, first_lag, newest_committed, newest_end, span, commits,
            now_s: float) -> list[GroupVerdict]:
    """Each group's verdict from its partitions' judged arrays: the worst partition (highest severity, then most
    lag, then first) found for every group at once; only its reason is worded."""
    rows = len(severity)
    bounds = batch._bounds()
    judged = severity != _NO_VERDICT
    counted = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(judged, out=counted[1:])
    judged_per_group = (counted[bounds[1:]] - counted[bounds[:-1]]).tolist()
    ranked = np.lexsort((-np.arange(rows), newest_lag, np.where(judged, severity, -1), batch.owner))
    worst_rows = ranked[np.maximum(bounds[1:] - 1, 0)].tolist()
    bad: dict[int, dict[str, str]] = {}
    for row in np.nonzero(judged & (severity != SEVERITY[OK]))[0].tolist():
        bad.setdefault(int(batch.owner[row]), {})[batch.keys[row]] = _BY_SEVERITY[int(severity[row])]
    words = _Words(batch.keys, severity, newest_lag, first_lag, newest_committed, newest_end, span, commits, now_s)
    verdicts = []
    for g, judged_count in enumerate(judged_per_group):
        if not judged_count:
            verdicts.append(GroupVerdict("", "collecting samples" if bounds[g + 1] > bounds[g] else
                                         "no committed offsets"))
            continue
        group_bad = bad.get(g)
        if not group_bad:
            verdicts.append(GroupVerdict(OK, f"{judged_count} partition{'s' if judged_count != 1 else ''} consuming "
                                             "or caught up"))
            continue
        worst = worst_rows[g]
        verdicts.append(GroupVerdict(
            _BY_SEVERITY[words.severity[worst]],
            words.reason(worst) + others_not_ok([k for k in group_bad if k != batch.keys[worst]]),
            group_bad))
    return verdicts


class _Words:
    """The reasons of judged partitions, worded as status.py words them."""

    def __init__(self, keys, severity, newest_lag, first_lag, newest_committed, newest_end, span, commits, now_s):
        self.keys, self.now_s = keys, now_s
        self.severity, self.lag = severity.tolist(), newest_lag.tolist()
        self.first_lag, self.committed = first_lag.tolist(), newest_committed.tolist()
        self.end, self.span = newest_end.tolist(), span.tolist()
        self.commits = commits.tolist()

    def reason(self, row: int) -> str:
        key, status, lag = self.keys[row], _BY_SEVERITY[self.severity[row]], self.lag[row]
        committed = self.committed[row]
        if status == BLOCKED:
            return (f"{key}: waiting at the last stable offset {committed:,} behind an open transaction "
                    f"({self.end[row] - committed:,} offsets held back)")
        if status == STOP:
            commit = self.commits[row]
            why = "no members" if commit != commit else f"no commit for {minutes_text(self.now_s - commit)}"
            return f"{key}: {why}, committed offset {committed:,} with lag {lag:,}"
        if status == ERR:
            return (f"{key}: committed offset {committed:,} has not moved for {minutes_text(self.span[row])} "
                    f"with lag {lag:,}")
        return (f"{key}: lag grew from {self.first_lag[row]:,} to {lag:,} over {minutes_text(self.span[row])} "
                f"while committing")
