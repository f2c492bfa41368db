"""Lag history: one sweep samples every group's committed offsets and the log end offsets behind them, stores a
row per group and topic, and re-evaluates each group's status; rollups and pruning keep the storage bounded.

These record observations of the cluster and change nothing in Kafka, so they write no audit events.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction

from console.clusters.models import Cluster
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from console.kafka.admin import KafkaAdmin
from console.kafka.errors import KafkaGatewayError
from console.kafka.ops_offsets import LATEST, STABLE
from offsets.lag.status import group_verdict, window_append, window_totals
from offsets.models import GROUP_ID_MAX_STORED, GroupCommitStat, GroupLagStatus, LagSample, LagSweep

log = logging.getLogger(__name__)
MAX_PARALLEL_CLUSTERS = 32
ROLLUP_STEPS = (300, 3600)  # each rolled up from the step before it (raw samples are step 0)
_NO_MEMBERS = {"Empty", "Dead"}


@dataclass(frozen=True)
class SweepResult:
    groups: int
    partitions: int
    duration_ms: int


def _observe(admin: KafkaAdmin):
    """A few batched round trips whatever the number of groups: ListGroups, OffsetFetch for all groups sent
    together, and ListOffsets (latest, and read_committed's last stable offset) for every committed partition,
    grouped by leader."""
    listings = admin.list_groups()
    committed = admin.group_offsets([g.group_id for g in listings], skip_failed=True)
    streams = _streams_groups(admin, {g.group_id for g in listings})
    if streams:
        listings = listings + streams
        committed.update(admin.streams_group_offsets([g.group_id for g in streams]))
    refs = sorted({ref for offsets in committed.values() for ref in offsets})
    found = admin.list_offsets_many(refs, [LATEST, STABLE], strict=False) if refs else {LATEST: {}, STABLE: {}}
    stables = {ref: at.offset for ref, at in found[STABLE].items()}
    return listings, committed, {ref: at.offset for ref, at in found[LATEST].items()}, stables


def _streams_groups(admin: KafkaAdmin, known: set[str]) -> list:
    """Streams groups commit offsets as consumer groups do, so their lag and status follow the same rules. Kafka's
    Java client lists them; if it cannot, the consumer groups are still sampled."""
    try:
        return [g for g in admin.list_groups_of_every_type() if g.group_type == "streams" and g.group_id not in known]
    except KafkaGatewayError as exc:
        log.info("Streams groups of %s not sampled: %s", admin.cluster, exc.message)
        return []


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
    answer: tuple | None
    error: KafkaGatewayError | ConsoleError | None
    duration_s: float


def observe_clusters(names: list[str]) -> dict[str, Observation]:
    """Asks every cluster at once, each bounded on its own, so a sweep takes as long as the slowest cluster
    rather than the sum of their timeouts. Only the Kafka calls run in threads; the database stays here."""
    admins: dict[str, KafkaAdmin] = {}
    observations: dict[str, Observation] = {}
    for name in names:
        try:
            admins[name] = cluster_admin(name)
        except ConsoleError as exc:  # e.g. a secret's environment variable is not set
            observations[name] = Observation(name, None, exc, 0.0)

    def observe(name: str) -> Observation:
        started = time.monotonic()
        try:
            return Observation(name, _observe(admins[name]), None, time.monotonic() - started)
        except (KafkaGatewayError, ConsoleError) as exc:
            return Observation(name, None, exc, time.monotonic() - started)

    if admins:
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_CLUSTERS, len(admins))) as pool:
            for observation in pool.map(observe, list(admins)):
                observations[observation.cluster] = observation
    return observations


def lag_sample(*, cluster: str, now: datetime | None = None, observation: Observation | None = None) -> SweepResult:
    """One sweep of a cluster. Raises ClusterUnavailable (and notes it on the cluster's LagSweep) when it is down."""
    now = now or datetime.now(UTC)
    observation = observation or observe_clusters([cluster])[cluster]
    if observation.error is not None:
        LagSweep.objects.update_or_create(cluster=cluster, defaults={"last_error": observation.error.message,
                                                                     "last_error_at": now})
        raise observation.error
    listings, committed, ends, stables = observation.answer
    too_long = [g.group_id for g in listings if len(g.group_id) > GROUP_ID_MAX_STORED]
    if too_long:  # one odd name must not stop the sweep for every other group
        log.warning("Lag of %d group(s) on %s not stored: ids longer than %d characters", len(too_long), cluster,
                    GROUP_ID_MAX_STORED)
        listings = [g for g in listings if len(g.group_id) <= GROUP_ID_MAX_STORED]
    storing_from = time.monotonic()
    rows: list[LagSample] = []
    observed: dict[str, dict[str, tuple[int, int]]] = {}
    for listing in listings:
        per_topic: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        seen = observed[listing.group_id] = {}
        for ref, offset in committed.get(listing.group_id, {}).items():
            if ref not in ends:
                continue  # its leader did not answer: a gap rather than a wrong figure
            seen[str(ref)] = (offset, ends[ref], stables.get(ref))
            totals = per_topic[ref.topic]
            totals[0] += max(0, ends[ref] - offset)
            totals[1] += offset
            totals[2] += ends[ref]
            totals[3] += 1
        rows += [LagSample(cluster=cluster, group=listing.group_id, topic=topic, step=0, time=now, lag=lag,
                           lag_max=lag, committed=c, end=e, partitions=n)
                 for topic, (lag, c, e, n) in per_topic.items()]
    size = settings.LAG_STATUS_WINDOW
    last_commits = _trusted_last_commits(cluster, now, size * settings.LAG_SAMPLE_INTERVAL_S)
    windows = dict(GroupLagStatus.objects.filter(cluster=cluster).values_list("group", "window"))
    statuses = []
    for listing in listings:
        status = GroupLagStatus(cluster=cluster, group=listing.group_id,
                                window=windows.get(listing.group_id, {}))
        statuses.append(status)
        status.window = window_append(status.window, now.timestamp(), observed[listing.group_id], size)
        verdict = group_verdict(status.window, has_members=listing.state not in _NO_MEMBERS,
                                last_commit_s=last_commits.get(listing.group_id), now_s=now.timestamp())
        status.status, status.reason, status.partition_status = verdict.status, verdict.reason, verdict.partitions
        status.totals = window_totals(status.window)
    duration_ms = int((observation.duration_s + time.monotonic() - storing_from) * 1000)
    partitions = sum(len(seen) for seen in observed.values())
    with transaction.atomic():
        LagSample.objects.bulk_create(rows, batch_size=500, ignore_conflicts=True)
        # Replacing every row is much cheaper than an UPDATE per changed field; a group that is gone loses its
        # status with it, while its lag history stays until retention removes it.
        GroupLagStatus.objects.filter(cluster=cluster).delete()
        GroupLagStatus.objects.bulk_create(statuses, batch_size=500)
        LagSweep.objects.update_or_create(cluster=cluster, defaults={
            "last_ok_at": now, "groups": len(listings), "partitions": partitions, "duration_ms": duration_ms})
    return SweepResult(groups=len(listings), partitions=partitions, duration_ms=duration_ms)


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
            outcome[name] = f"{result.groups} groups, {result.partitions} partitions in {result.duration_ms} ms"
        except (KafkaGatewayError, ConsoleError) as exc:
            log.warning("Lag sample of %s failed: %s", name, exc.message)
            outcome[name] = f"failed: {exc.message}"
    lag_prune()
    return outcome
