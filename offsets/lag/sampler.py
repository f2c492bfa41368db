"""Lag history: one sweep samples every group's committed offsets and the log end offsets behind them, stores a
row per group and topic, and re-evaluates each group's status; rollups and pruning keep the storage bounded.

A sweep is bounded three ways, whatever the cluster's size: every gateway call covers a bounded number of groups
or partitions, storing goes a batch of groups at a time, and a budget (LAG_SWEEP_BUDGET_S) ends the fetching early,
the most urgent groups having been asked first (offsets/lag/priority.py).

These record observations of the cluster and change nothing in Kafka, so they write no audit events.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction

from console.clusters.models import Cluster
from console.bulk_sql import insert_rows
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from console.kafka.admin import KafkaAdmin
from console.kafka.errors import ClusterUnavailable, KafkaGatewayError
from console.kafka.ops_offsets import LATEST, STABLE
from console.kafka.types import GroupListing, PartitionRef
from offsets.lag.priority import PreviousSample, previous_sample, sweep_order
from offsets.lag.status import group_verdict, window_append, window_totals
from offsets.models import GROUP_ID_MAX_STORED, GroupCommitStat, GroupLagStatus, LagSample, LagSweep

log = logging.getLogger(__name__)
MAX_PARALLEL_CLUSTERS = 32
ROLLUP_STEPS = (300, 3600)  # each rolled up from the step before it (raw samples are step 0)
_NO_MEMBERS = {"Empty", "Dead"}
# Each gateway call of a sweep covers at most this many groups (OffsetFetch; the gateway keeps MAX_IN_FLIGHT of
# them in flight) or partitions (ListOffsets, in the gateway's windows), so every call stays within the bounded
# wait of the cluster's client process, and the sweep can stop between calls when its budget is spent.
SWEEP_GROUPS_PER_CALL = 2000
SWEEP_PARTITIONS_PER_CALL = 20000
# OffsetFetch calls start only within this share of the budget: ListOffsets and storing what was fetched need
# the rest.
FETCH_SHARE = 0.6
_SAMPLE_FIELDS = ("cluster", "group", "topic", "step", "time", "lag", "lag_max", "committed", "end", "partitions")
_SAMPLE_KEY = ("cluster", "group", "topic", "step", "time")
_STATUS_FIELDS = ("cluster", "group", "status", "reason", "window", "partition_status", "totals", "sampled_at")
STORE_BATCH = 1000  # groups whose samples and statuses are computed and written together (bounds memory)
SKIPPED_NAMES_KEPT = 50
MSG_SKIPPED_BUDGET = ("{skipped:,} of {listed:,} groups not sampled: the sweep's budget of {budget:g} s "
                      "(LAG_SWEEP_BUDGET_S) ran out; they keep their earlier status")
MSG_SKIPPED_ERROR = ("{skipped:,} of {listed:,} groups not sampled: the cluster stopped answering part-way "
                     "({error}); they keep their earlier status")


@dataclass(frozen=True)
class SweepResult:
    groups: int  # listed; all but `skipped` of them sampled
    partitions: int
    duration_ms: int
    skipped: int = 0


@dataclass(frozen=True)
class SweepAnswer:
    """What a cluster answered to one sweep: every group listed, the offsets of those asked, and which were not
    asked (in the order they would have been)."""

    listings: list[GroupListing]
    committed: dict[str, dict[PartitionRef, int]]
    ends: dict[PartitionRef, int]
    stables: dict[PartitionRef, int]
    skipped: list[str] = field(default_factory=list)
    budget_s: float = 0.0
    stopped_by: str = ""  # the error that ended fetching early, when it was not the budget


def _observe(admin: KafkaAdmin, previous: dict[str, PreviousSample], budget_s: float) -> SweepAnswer:
    """ListGroups, then OffsetFetch for the groups in sweep_order, SWEEP_GROUPS_PER_CALL at a time until the
    budget's fetching share is spent, then ListOffsets (latest, and read_committed's last stable offset) for every
    partition they committed on, SWEEP_PARTITIONS_PER_CALL at a time. The first call of each kind always runs,
    so a sweep samples something however short its budget."""
    started = time.monotonic()
    listings = admin.list_groups()
    streams = _streams_groups(admin, {g.group_id for g in listings})
    listings = listings + streams
    streams_ids = {g.group_id for g in streams}
    order = sweep_order([g.group_id for g in listings], previous)
    committed: dict[str, dict[PartitionRef, int]] = {}
    skipped: list[str] = []
    stopped_by = ""
    for start in range(0, len(order), SWEEP_GROUPS_PER_CALL):
        if start and time.monotonic() - started >= FETCH_SHARE * budget_s:
            skipped = order[start:]
            break
        chunk = order[start:start + SWEEP_GROUPS_PER_CALL]
        try:
            _fetch_committed(admin, chunk, streams_ids, committed)
        except KafkaGatewayError as exc:
            if not start:
                raise
            skipped, stopped_by = order[start:], exc.message
            break
    if skipped:
        log.warning("Lag sweep of %s: %d of %d groups not asked (%s)", admin.cluster, len(skipped), len(order),
                    stopped_by or f"budget of {budget_s:g} s spent")
    refs = sorted({ref for offsets in committed.values() for ref in offsets})
    ends: dict[PartitionRef, int] = {}
    stables: dict[PartitionRef, int] = {}
    for start in range(0, len(refs), SWEEP_PARTITIONS_PER_CALL):
        found = admin.list_offsets_many(refs[start:start + SWEEP_PARTITIONS_PER_CALL], [LATEST, STABLE],
                                        strict=False)
        ends.update((ref, at.offset) for ref, at in found[LATEST].items())
        stables.update((ref, at.offset) for ref, at in found[STABLE].items())
    return SweepAnswer(listings, committed, ends, stables, skipped, budget_s, stopped_by)


def _fetch_committed(admin: KafkaAdmin, chunk: list[str], streams_ids: set[str], into: dict) -> None:
    """One multi-group OffsetFetch per coordinator for the chunk (Kafka's Java Admin). If that fails for a reason
    other than the cluster not answering (a group the console may not describe fails the whole batch, or Java's
    clients are not installed), the chunk is asked again a group per request, so one group cannot cost the rest."""
    consumers = [g for g in chunk if g not in streams_ids]
    if consumers:
        try:
            into.update(admin.group_offsets_batched(consumers))
        except ClusterUnavailable:
            raise
        except KafkaGatewayError as exc:
            log.info("Lag sweep of %s: batched OffsetFetch failed (%s); asking group by group", admin.cluster,
                     exc.message)
            into.update(admin.group_offsets(consumers, skip_failed=True))
    streams = [g for g in chunk if g in streams_ids]
    if streams:
        into.update(admin.streams_group_offsets(streams))


def _streams_groups(admin: KafkaAdmin, known: set[str]) -> list:
    """Streams groups commit offsets as consumer groups do, so their lag and status follow the same rules. Kafka's
    Java client lists them; if it cannot, the consumer groups are still sampled."""
    try:
        return [g for g in admin.list_groups_of_every_type() if g.group_type == "streams" and g.group_id not in known]
    except KafkaGatewayError as exc:
        log.info("Streams groups of %s not sampled: %s", admin.cluster, exc.message)
        return []


def _previous_samples(cluster: str) -> dict[str, PreviousSample]:
    """What the stored statuses say of each group, to order the next sweep (one query, without the windows)."""
    rows = GroupLagStatus.objects.filter(cluster=cluster).values_list("group", "status", "totals", "sampled_at")
    return {group: previous_sample(status, totals or [], at.timestamp() if at else None)
            for group, status, totals, at in rows.iterator(5000)}


def _trusted_last_commits(cluster: str, now: datetime, span_s: float) -> dict[str, float]:
    """Last commit per group from the recorder, but only while the recorder evidently keeps up (it saw some
    group commit lately); a stopped recorder would make every live group look idle."""
    stats = dict(GroupCommitStat.objects.filter(cluster=cluster).values_list("group", "last_commit_at"))
    if not stats or max(stats.values()) < now - timedelta(seconds=2 * span_s):
        return {}
    return {group: at.timestamp() for group, at in stats.items()}


@dataclass(frozen=True)
class Observation:
    """What one cluster answered (or the error it gave) and how long asking took."""

    cluster: str
    answer: SweepAnswer | None
    error: KafkaGatewayError | ConsoleError | None
    duration_s: float


def observe_clusters(names: list[str], *, budget_s: float | None = None) -> dict[str, Observation]:
    """Asks every cluster at once, each bounded on its own, so a sweep takes as long as the slowest cluster
    rather than the sum of their timeouts. Only the Kafka calls run in threads; the database stays here."""
    budget_s = settings.LAG_SWEEP_BUDGET_S if budget_s is None else budget_s
    admins: dict[str, KafkaAdmin] = {}
    observations: dict[str, Observation] = {}
    for name in names:
        try:
            admins[name] = cluster_admin(name)
        except ConsoleError as exc:  # e.g. a secret's environment variable is not set
            observations[name] = Observation(name, None, exc, 0.0)
    previous = {name: _previous_samples(name) for name in admins}

    def observe(name: str) -> Observation:
        started = time.monotonic()
        try:
            return Observation(name, _observe(admins[name], previous[name], budget_s), None,
                               time.monotonic() - started)
        except (KafkaGatewayError, ConsoleError) as exc:
            return Observation(name, None, exc, time.monotonic() - started)

    if admins:
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_CLUSTERS, len(admins))) as pool:
            for observation in pool.map(observe, list(admins)):
                observations[observation.cluster] = observation
    return observations


def lag_sample(*, cluster: str, now: datetime | None = None, observation: Observation | None = None,
               budget_s: float | None = None) -> SweepResult:
    """One sweep of a cluster. Raises ClusterUnavailable (and notes it on the cluster's LagSweep) when it is down.

    Groups the sweep had no time for keep their earlier status; how many, and why, go on the LagSweep row."""
    now = now or datetime.now(UTC)
    observation = observation or observe_clusters([cluster], budget_s=budget_s)[cluster]
    if observation.error is not None:
        LagSweep.objects.update_or_create(cluster=cluster, defaults={"last_error": observation.error.message,
                                                                     "last_error_at": now})
        raise observation.error
    answer = observation.answer
    listings = answer.listings
    too_long = [g.group_id for g in listings if len(g.group_id) > GROUP_ID_MAX_STORED]
    if too_long:  # one odd name must not stop the sweep for every other group
        log.warning("Lag of %d group(s) on %s not stored: ids longer than %d characters", len(too_long), cluster,
                    GROUP_ID_MAX_STORED)
        listings = [g for g in listings if len(g.group_id) <= GROUP_ID_MAX_STORED]
    storing_from = time.monotonic()
    skipped = [g for g in answer.skipped if len(g) <= GROUP_ID_MAX_STORED]
    not_asked = set(skipped)
    sampled = [g for g in listings if g.group_id not in not_asked]
    size = settings.LAG_STATUS_WINDOW
    last_commits = _trusted_last_commits(cluster, now, size * settings.LAG_SAMPLE_INTERVAL_S)
    partitions = 0
    for start in range(0, len(sampled), STORE_BATCH):
        partitions += _store_batch(cluster, now, sampled[start:start + STORE_BATCH], answer, last_commits, size)
    listed = {g.group_id for g in listings}
    _forget_gone_groups(cluster, listed)
    duration_ms = int((observation.duration_s + time.monotonic() - storing_from) * 1000)
    reason = ""
    if skipped:
        reason = (MSG_SKIPPED_ERROR.format(skipped=len(skipped), listed=len(listings), error=answer.stopped_by)
                  if answer.stopped_by else
                  MSG_SKIPPED_BUDGET.format(skipped=len(skipped), listed=len(listings), budget=answer.budget_s))
    LagSweep.objects.update_or_create(cluster=cluster, defaults={
        "last_ok_at": now, "groups": len(listings), "partitions": partitions, "duration_ms": duration_ms,
        "skipped_groups": len(skipped), "skipped_reason": reason,
        "skipped_sample": skipped[:SKIPPED_NAMES_KEPT]})
    return SweepResult(groups=len(listings), partitions=partitions, duration_ms=duration_ms, skipped=len(skipped))


def _store_batch(cluster: str, now: datetime, batch: list[GroupListing], answer: SweepAnswer,
                 last_commits: dict[str, float], size: int) -> int:
    """Samples (one row per group and topic) and statuses of one batch of groups, in one transaction: only this
    batch's windows are read and held. Returns the partitions sampled."""
    windows = dict(GroupLagStatus.objects.filter(cluster=cluster, group__in=[g.group_id for g in batch])
                   .values_list("group", "window"))
    ends, stables = answer.ends, answer.stables
    rows: list[tuple] = []
    statuses: list[tuple] = []
    partitions = 0
    for listing in batch:
        per_topic: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        seen: dict[str, tuple] = {}
        for ref, offset in answer.committed.get(listing.group_id, {}).items():
            end = ends.get(ref)
            if end is None:
                continue  # its leader did not answer: a gap rather than a wrong figure
            seen[str(ref)] = (offset, end, stables.get(ref))
            totals = per_topic[ref.topic]
            totals[0] += max(0, end - offset)
            totals[1] += offset
            totals[2] += end
            totals[3] += 1
        partitions += len(seen)
        rows += [(cluster, listing.group_id, topic, 0, now, lag, lag, c, e, n)
                 for topic, (lag, c, e, n) in per_topic.items()]
        window = window_append(windows.get(listing.group_id, {}), now.timestamp(), seen, size)
        verdict = group_verdict(window, has_members=listing.state not in _NO_MEMBERS,
                                last_commit_s=last_commits.get(listing.group_id), now_s=now.timestamp())
        statuses.append((cluster, listing.group_id, verdict.status, verdict.reason, window, verdict.partitions,
                         window_totals(window), now))
    with transaction.atomic():
        insert_rows(LagSample, _SAMPLE_FIELDS, rows, conflict=_SAMPLE_KEY)
        insert_rows(GroupLagStatus, _STATUS_FIELDS, statuses, conflict=("cluster", "group"),
                    update=_STATUS_FIELDS[2:])
    return partitions


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


def lag_sample_all() -> dict[str, str]:
    """What the beat task runs: a sweep and a rollup of every registered cluster (one down cluster does not stop
    the others), then pruning. Returns how each cluster went."""
    outcome = {}
    names = list(Cluster.objects.order_by("name").values_list("name", flat=True))
    observations = observe_clusters(names)
    for name in names:
        try:
            result = lag_sample(cluster=name, observation=observations[name])
            lag_rollup(cluster=name)
            outcome[name] = f"{result.groups} groups, {result.partitions} partitions in {result.duration_ms} ms" + (
                f", {result.skipped} groups skipped" if result.skipped else "")
        except (KafkaGatewayError, ConsoleError) as exc:
            log.warning("Lag sample of %s failed: %s", name, exc.message)
            outcome[name] = f"failed: {exc.message}"
    lag_prune()
    return outcome
