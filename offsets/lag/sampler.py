"""Lag history: one sweep samples every group's committed offsets and the log end offsets behind them, stores a
row per group and topic, and re-evaluates each group's status; rollups and pruning keep the storage bounded.

A sweep is bounded three ways, whatever the cluster's size: every gateway call covers a bounded number of groups
or partitions (offsets/lag/observe.py, which hands each batch over as soon as Kafka has answered for it, so storing
it overlaps asking for the next), storing goes a batch of groups at a time, and a budget (LAG_SWEEP_BUDGET_S) ends
the asking early, the most urgent groups having been asked first (offsets/lag/priority.py).

These record observations of the cluster and change nothing in Kafka, so they write no audit events.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, JSONField, Q, Value, When

from console.bulk_sql import insert_rows
from console.gc_pause import cycle_collector_paused
from console.clusters.models import Cluster
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import GroupListing
from offsets.lag.batch_writer import BatchWriter
from offsets.lag.last_total import LastTotal
from offsets.lag.observe import Asked, Failed, Finished, Listed, Sweeps
from offsets.lag.priority import PreviousSample, previous_sample
from offsets.lag.window_batch import Sample, WindowBatch
from offsets.models import GROUP_ID_MAX_STORED, GroupCommitStat, GroupLagStatus, LagSample, LagSweep
from offsets.protocols.observed import group_types_observe

log = logging.getLogger(__name__)
ROLLUP_STEPS = (300, 3600)  # each rolled up from the step before it (raw samples are step 0)
_NO_MEMBERS = {"Empty", "Dead"}
_SAMPLE_FIELDS = ("cluster", "group", "topic", "step", "time", "lag", "lag_max", "committed", "end", "partitions")
_SAMPLE_KEY = ("cluster", "group", "topic", "step", "time")
_STATUS_FIELDS = ("cluster", "group", "status", "reason", "window", "partition_status", "totals", "sampled_at")
STORE_BATCH = 1000  # groups whose samples and statuses are computed and written together (bounds memory)
SKIPPED_NAMES_KEPT = 50
MSG_SKIPPED_BUDGET = ("{skipped:,} of {listed:,} groups not sampled: the sweep's budget of {budget:g} s "
                      "(LAG_SWEEP_BUDGET_S) ran out; they keep their earlier status")
MSG_STILL_RUNNING = "skipped: the sweep that started at {since} is still running"
MSG_SKIPPED_ERROR = ("{skipped:,} of {listed:,} groups not sampled: the cluster stopped answering part-way "
                     "({error}); they keep their earlier status")


@dataclass(frozen=True)
class SweepResult:
    groups: int  # listed (but share groups, which commit no offsets); all but `skipped` of them sampled
    partitions: int
    duration_ms: int  # asking, and the storing that did not overlap it
    skipped: int = 0
    asked_ms: int = 0  # asking Kafka alone
    listed: Listed | None = None  # every group the sweep listed, of every type, for the groups list


def _previous_samples(cluster: str) -> dict[str, PreviousSample]:
    """What the stored statuses say of each group, to order the next sweep (one query, without the windows).

    The database takes the last two totals; a group's whole list is fetched (and parsed) only when one of them is
    missing, since the order then looks further back, past the nulls."""
    last, before = LastTotal("totals", 1), LastTotal("totals", 2)
    rows = (GroupLagStatus.objects.filter(cluster=cluster).annotate(last=last, before=before)
            .annotate(whole=Case(When(last__isnull=False, before__isnull=False, then=Value(None)),
                                 default=F("totals"), output_field=JSONField()))
            .values_list("group", "status", "last", "before", "whole", "sampled_at"))
    return {group: previous_sample(status, whole if whole is not None else [earlier, lag],
                                   at.timestamp() if at else None)
            for group, status, lag, earlier, whole, at in rows.iterator(5000)}


def _trusted_last_commits(cluster: str, now: datetime, span_s: float) -> dict[str, float]:
    """Last commit per group from the recorder, but only while the recorder evidently keeps up (it saw some
    group commit lately); a stopped recorder would make every live group look idle."""
    stats = dict(GroupCommitStat.objects.filter(cluster=cluster).values_list("group", "last_commit_at"))
    if not stats or max(stats.values()) < now - timedelta(seconds=2 * span_s):
        return {}
    return {group: at.timestamp() for group, at in stats.items()}


def lag_sample(*, cluster: str, now: datetime | None = None, budget_s: float | None = None,
               sweeps: Sweeps | None = None) -> SweepResult:
    """One sweep of a cluster. Raises ClusterUnavailable (and notes it on the cluster's LagSweep) when it is down.

    Each batch of groups is stored as soon as Kafka has answered for it, while the next is asked. Groups the sweep
    had no time for keep their earlier status; how many, and why, go on the LagSweep row."""
    now = now or datetime.now(UTC)
    own = sweeps is None
    if own:
        budget = settings.LAG_SWEEP_BUDGET_S if budget_s is None else budget_s
        sweeps = Sweeps([cluster], {cluster: _previous_samples(cluster)}, budget)
    try:
        with cycle_collector_paused():
            return _store_parts(cluster, now, sweeps.parts(cluster))
    finally:
        if own:
            sweeps.close()


def _store_parts(cluster: str, now: datetime, parts) -> SweepResult:
    size = settings.LAG_STATUS_WINDOW
    last_commits = _trusted_last_commits(cluster, now, size * settings.LAG_SAMPLE_INTERVAL_S)
    writer = BatchWriter()
    try:
        return _stored(cluster, now, parts, writer, last_commits, size)
    finally:
        writer.close()


def _stored(cluster: str, now: datetime, parts, writer: BatchWriter, last_commits: dict[str, float],
            size: int) -> SweepResult:
    listed: dict[str, GroupListing] = {}
    listing: Listed | None = None
    partitions = 0
    storing_s = 0.0
    for part in parts:
        if isinstance(part, Failed):
            LagSweep.objects.update_or_create(cluster=cluster, defaults={"last_error": part.error.message,
                                                                         "last_error_at": now})
            raise part.error
        if isinstance(part, Finished):
            finished = part
            break
        storing_from = time.monotonic()
        if isinstance(part, Listed):
            listing = part
            listed = _storable(cluster, [g for g in part.listings if g.group_type != "share"])
            if not part.problem:  # librdkafka's fallback listing names no types: nothing to compare
                group_types_observe(cluster=cluster, listings=part.listings, at=now)
            continue
        batch = [listed[g] for g in part.groups if g in listed]
        for start in range(0, len(batch), STORE_BATCH):
            partitions += _store_batch(cluster, now, batch[start:start + STORE_BATCH], part, last_commits, size,
                                       writer)
        storing_s += time.monotonic() - storing_from
    storing_from = time.monotonic()
    writer.close()
    _forget_gone_groups(cluster, set(listed))
    skipped = [g for g in finished.skipped if g in listed]
    storing_s += time.monotonic() - storing_from
    # What storing added after the asking ended; no more than this cluster's own storing (in a sweep of several
    # clusters, this one's parts may have waited while another's were stored).
    overhang = min(storing_s, max(0.0, time.monotonic() - finished.at))
    duration_ms = int((finished.asked_s + overhang) * 1000)
    reason = ""
    if skipped:
        reason = (MSG_SKIPPED_ERROR.format(skipped=len(skipped), listed=len(listed), error=finished.stopped_by)
                  if finished.stopped_by else
                  MSG_SKIPPED_BUDGET.format(skipped=len(skipped), listed=len(listed), budget=finished.budget_s))
    log.debug("Lag sweep of %s: %d groups stored, the sweep took %.2f s (%.2f s of storing after the asking)",
              cluster, len(listed) - len(skipped), duration_ms / 1000, overhang)
    LagSweep.objects.update_or_create(cluster=cluster, defaults={
        "last_ok_at": now, "groups": len(listed), "partitions": partitions, "duration_ms": duration_ms,
        "skipped_groups": len(skipped), "skipped_reason": reason,
        "skipped_sample": skipped[:SKIPPED_NAMES_KEPT]})
    return SweepResult(groups=len(listed), partitions=partitions, duration_ms=duration_ms, skipped=len(skipped),
                       asked_ms=int(finished.asked_s * 1000), listed=listing)


def store_groups(cluster: str, now: datetime, listings: list[GroupListing], answer: Asked, *, size: int) -> int:
    """Samples and statuses of a few groups asked outside a sweep (offsets/lag/recheck.py), stored and judged as a
    sweep stores its batches. Returns the partitions sampled."""
    writer = BatchWriter()
    try:
        last_commits = _trusted_last_commits(cluster, now, size * settings.LAG_SAMPLE_INTERVAL_S)
        return _store_batch(cluster, now, list(_storable(cluster, listings).values()), answer, last_commits, size,
                            writer)
    finally:
        writer.close()


def _storable(cluster: str, listings: list[GroupListing]) -> dict[str, GroupListing]:
    too_long = [g.group_id for g in listings if len(g.group_id) > GROUP_ID_MAX_STORED]
    if too_long:  # one odd name must not stop the sweep for every other group
        log.warning("Lag of %d group(s) on %s not stored: ids longer than %d characters", len(too_long), cluster,
                    GROUP_ID_MAX_STORED)
    return {g.group_id: g for g in listings if len(g.group_id) <= GROUP_ID_MAX_STORED}


def _store_batch(cluster: str, now: datetime, batch: list[GroupListing], answer: Asked,
                 last_commits: dict[str, float], size: int, writer: BatchWriter) -> int:
    """Samples (one row per group and topic) and statuses of one batch of groups, written in one transaction by
    `writer`: only this batch's windows are read and held, and they are extended and judged together
    (offsets/lag/window_batch.py). Returns the partitions sampled."""
    stored = dict(GroupLagStatus.objects.filter(cluster=cluster, group__in=[g.group_id for g in batch])
                  .values_list("group", "window"))
    windows = WindowBatch([stored.get(listing.group_id) for listing in batch], size)
    ends, stables = answer.ends, answer.stables
    sample = Sample()
    rows: list[tuple] = []
    for g, listing in enumerate(batch):
        per_topic: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for ref, offset in answer.committed.get(listing.group_id, {}).items():
            end = ends.get(ref)
            if end is None:
                continue  # its leader did not answer: a gap rather than a wrong figure
            sample.add(g, f"{ref.topic}-{ref.partition}", offset, end, stables.get(ref))
            totals = per_topic[ref.topic]
            totals[0] += max(0, end - offset)
            totals[1] += offset
            totals[2] += end
            totals[3] += 1
        rows += [(cluster, listing.group_id, topic, 0, now, lag, lag, c, e, n)
                 for topic, (lag, c, e, n) in per_topic.items()]
    windows.append_sample(now.timestamp(), sample)
    verdicts = windows.verdicts([listing.state not in _NO_MEMBERS for listing in batch],
                                [last_commits.get(listing.group_id) for listing in batch], now.timestamp())
    statuses = [(cluster, listing.group_id, verdict.status, verdict.reason, blob, verdict.partitions, totals, now)
                for listing, verdict, blob, totals in zip(batch, verdicts, windows.blobs(), windows.totals())]
    writer.write(lambda: _write_batch(rows, statuses))
    return len(sample.keys)


def _write_batch(rows: list[tuple], statuses: list[tuple]) -> None:
    with transaction.atomic():
        insert_rows(LagSample, _SAMPLE_FIELDS, rows, conflict=_SAMPLE_KEY)
        # A group re-checked after a change made here (offsets/lag/recheck.py) may hold a sample newer than this
        # sweep's, which started before the change: that one stays.
        insert_rows(GroupLagStatus, _STATUS_FIELDS, statuses, conflict=("cluster", "group"),
                    update=_STATUS_FIELDS[2:], unless_newer="sampled_at")


def _forget_gone_groups(cluster: str, listed: set[str]) -> None:
    """A group no longer listed loses its status (its lag history stays until retention removes it)."""
    gone = [g for g in GroupLagStatus.objects.filter(cluster=cluster).values_list("group", flat=True).iterator(5000)
            if g not in listed]
    for start in range(0, len(gone), STORE_BATCH):
        GroupLagStatus.objects.filter(cluster=cluster, group__in=gone[start:start + STORE_BATCH]).delete()


def _floor(moment: datetime, step: int) -> datetime:
    return datetime.fromtimestamp(int(moment.timestamp()) // step * step, UTC)


def lag_rollup(*, cluster: str, now: datetime | None = None) -> int:
    """Rolls complete buckets of each step up from the step before it: last lag, highest lag, last offsets.
    Returns the bucket rows written. Idempotent: a bucket written twice is overwritten with the same values."""
    now = now or datetime.now(UTC)
    sweep, _ = LagSweep.objects.get_or_create(cluster=cluster)
    written, source = 0, 0
    for step in ROLLUP_STEPS:
        until = _floor(now, step)
        since = sweep.rolled_until.get(str(step))
        rows = LagSample.objects.filter(cluster=cluster, step=source, time__lt=until)
        if since is not None:
            rows = rows.filter(time__gte=datetime.fromtimestamp(since, UTC))
        buckets: dict[tuple, LagSample] = {}
        for group, topic, at, lag, lag_max, committed, end, partitions in rows.order_by("time").values_list(
                "group", "topic", "time", "lag", "lag_max", "committed", "end", "partitions").iterator(2000):
            key = (group, topic, _floor(at, step))
            bucket = buckets.get(key)
            if bucket is None:
                buckets[key] = LagSample(cluster=cluster, group=group, topic=topic, step=step, time=key[2], lag=lag,
                                         lag_max=lag_max, committed=committed, end=end, partitions=partitions)
            else:
                bucket.lag, bucket.committed, bucket.end, bucket.partitions = lag, committed, end, partitions
                bucket.lag_max = max(bucket.lag_max, lag_max)
        with transaction.atomic():
            LagSample.objects.bulk_create(
                list(buckets.values()), batch_size=500, update_conflicts=True,
                unique_fields=["cluster", "group", "topic", "step", "time"],
                update_fields=["lag", "lag_max", "committed", "end", "partitions"])
            sweep.rolled_until[str(step)] = until.timestamp()
            sweep.save(update_fields=["rolled_until"])
        written += len(buckets)
        source = step
    return written


def lag_prune(*, now: datetime | None = None) -> int:
    """Deletes samples older than their step's retention (settings.LAG_RETENTION_S). Returns rows deleted."""
    now = now or datetime.now(UTC)
    deleted = 0
    for step, keep_s in settings.LAG_RETENTION_S.items():
        deleted += LagSample.objects.filter(step=step, time__lt=now - timedelta(seconds=keep_s)).delete()[0]
    return deleted


def lag_sweep_claim(cluster: str, now: datetime) -> bool:
    """Marks a sweep of the cluster as running, unless one already is (started less than LAG_SWEEP_CLAIM_S ago).
    One conditional UPDATE, so of two workers starting at once only one gets it."""
    LagSweep.objects.get_or_create(cluster=cluster)
    abandoned = now - timedelta(seconds=settings.LAG_SWEEP_CLAIM_S)
    return bool(LagSweep.objects.filter(cluster=cluster)
                .filter(Q(running_since__isnull=True) | Q(running_since__lt=abandoned))
                .update(running_since=now))


def lag_sweep_release(clusters: list[str], claimed_at: datetime) -> None:
    """Ends the claims made at `claimed_at`; one taken over meanwhile (this sweep outlasted LAG_SWEEP_CLAIM_S) is
    the newer sweep's to end."""
    LagSweep.objects.filter(cluster__in=clusters, running_since=claimed_at).update(running_since=None)


def lag_sample_all(on_swept=None) -> dict[str, str]:
    """What the beat task runs: a sweep and a rollup of every registered cluster (one down cluster does not stop
    the others), then pruning. Returns how each cluster went. `on_swept(cluster, result)` runs after each
    cluster's sweep is stored (the task rebuilds the cluster's groups list from it). A cluster whose previous
    sweep is still running is left to it: two sweeps at once would each take longer, and the next would overlap
    them too."""
    outcome = {}
    now = datetime.now(UTC)
    names = []
    for name in Cluster.objects.order_by("name").values_list("name", flat=True):
        if lag_sweep_claim(name, now):
            names.append(name)
            continue
        running_since = LagSweep.objects.filter(cluster=name).values_list("running_since", flat=True).first()
        log.warning("Lag sample of %s skipped: its sweep started at %s is still running", name, running_since)
        outcome[name] = MSG_STILL_RUNNING.format(since=running_since.isoformat() if running_since else "?")
    sweeps = None
    try:
        sweeps = Sweeps(names, {name: _previous_samples(name) for name in names}, settings.LAG_SWEEP_BUDGET_S)
        for name in names:
            try:
                result = lag_sample(cluster=name, now=now, sweeps=sweeps)
                if on_swept is not None:
                    on_swept(name, result)
                lag_rollup(cluster=name)
                outcome[name] = f"{result.groups} groups, {result.partitions} partitions in {result.duration_ms} ms" + (
                    f", {result.skipped} groups skipped" if result.skipped else "")
            except (KafkaGatewayError, ConsoleError) as exc:
                log.warning("Lag sample of %s failed: %s", name, exc.message)
                outcome[name] = f"failed: {exc.message}"
    finally:
        if sweeps is not None:
            sweeps.close()
        lag_sweep_release(names, now)
    lag_prune()
    return outcome
