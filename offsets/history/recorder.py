"""The group recorder: tails `__consumer_offsets` into rebalance history, or samples DescribeGroups when the
internal topic may not be read. Each batch's rows and the read positions are saved in one transaction, so a
restart neither loses nor duplicates history."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from django.db import connection, transaction

from console.clusters.models import Cluster
from console.clusters.selectors import cluster_admin, cluster_connection, cluster_get
from console.kafka.errors import ClusterUnavailable, NotAuthorized, TopicNotFound
from console.kafka.reader import RawRecord, TopicTail
from offsets.history.timeline import Snapshot, apply_record
from offsets.models import GROUP_ID_MAX_STORED, ConsumerGroupState, GroupCommitStat, GroupGeneration, RecorderPosition, RecorderStatus
from offsets.history.records import (ClassicGroup, OffsetCommit, RecordDecodeError, commit_group, commit_timestamp,
                                     decode_record)

log = logging.getLogger(__name__)
OFFSETS_TOPIC = "__consumer_offsets"
SAMPLE_INTERVAL_S = 5.0
STATUS_EVERY_S = 5.0

MSG_NOT_ALLOWED = ("The console's principal may not read __consumer_offsets ({detail}); rebalance history is "
                   "sampled from group descriptions every {interval:g} s instead, so rebalances shorter than that "
                   "are missed.")
MSG_NO_OFFSETS_TOPIC = ("__consumer_offsets does not exist yet (no group has committed on this cluster); group "
                        "descriptions are sampled until it does.")
MSG_CATCHING_UP = "Reading the backlog of __consumer_offsets."


def recorder_status_note(cluster: str, state: str, *, detail: str = "", up_to: datetime | None = None,
                         behind: int | None = None) -> None:
    """Records how this cluster's recorder is doing; `up_to` and `behind` change only when given."""
    if not Cluster.objects.filter(name=cluster).exists():  # removed meanwhile: leave no status behind
        return
    defaults: dict = {"state": state, "detail": detail, "updated_at": datetime.now(UTC)}
    if up_to is not None:
        defaults["recorded_up_to"] = up_to
    if behind is not None:
        defaults["behind_records"] = behind
    RecorderStatus.objects.update_or_create(cluster=cluster, defaults=defaults)


def _time(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


class TopicNames:
    """Topic id → name for KIP-848 records; refreshed from DescribeTopics when an unknown id shows up."""

    def __init__(self, cluster: str) -> None:
        self.cluster, self.names, self.refreshed = cluster, {}, 0.0

    def __call__(self, topic_id: str) -> str:
        if topic_id not in self.names and time.monotonic() - self.refreshed > 2:
            admin = cluster_admin(self.cluster)
            described = admin.describe_topics([t.name for t in admin.list_topics()])
            self.names = {t.topic_id: name for name, t in described.items()}
            self.refreshed = time.monotonic()
        return self.names.get(topic_id, f"(deleted topic {topic_id})")


def store_batch(cluster: str, records: list[RawRecord], states: dict[str, dict], names: Callable[[str], str]) -> int:
    """Decodes a batch and saves what it derives together with the new read positions. Returns snapshots saved."""
    snapshots: list[Snapshot] = []
    tally: dict[bytes, list[int]] = {}  # group id bytes → [commits, latest commit time in ms]
    touched: set[str] = set()
    positions: dict[int, int] = {}
    for partition, offset, timestamp, key, value in records:
        positions[partition] = offset + 1
        group_bytes = commit_group(key)
        if group_bytes is not None:
            if value is None:
                continue  # an offset deleted or expired: not a commit
            stamp = commit_timestamp(value)
            if stamp is not None:
                _tally_commit(tally, group_bytes, stamp or timestamp)
                continue
        try:  # group metadata, and any commit value the shortcut does not know
            decoded = decode_record(key, value)
        except RecordDecodeError as exc:
            log.warning("Skipping %s-%s@%s: %s", OFFSETS_TOPIC, partition, offset, exc)
            continue
        if len(getattr(decoded, "group", "") or "") > GROUP_ID_MAX_STORED:
            continue  # kept out of storage (see GROUP_ID_MAX_STORED); shown live on its pages
        if isinstance(decoded, OffsetCommit):
            if decoded.offset is not None:
                _tally_commit(tally, decoded.group.encode(), decoded.commit_timestamp or timestamp)
            continue
        group = getattr(decoded, "group", None)
        if group is not None and not isinstance(decoded, ClassicGroup):
            touched.add(group)
        snapshots += apply_record(decoded, states, names, timestamp)
    commits = _commits_by_group(tally)
    with transaction.atomic():
        for snap in snapshots:
            GroupGeneration.objects.update_or_create(
                cluster=cluster, group=snap.group, protocol=snap.protocol, generation=snap.generation, sampled=False,
                defaults={"time": _time(snap.time_ms), "members": snap.members, "assignor": snap.assignor,
                          "leader": snap.leader},
            )
        for group in touched:
            if group in states:
                ConsumerGroupState.objects.update_or_create(cluster=cluster, group=group,
                                                            defaults={"state": states[group]})
            else:
                ConsumerGroupState.objects.filter(cluster=cluster, group=group).delete()
        _store_commit_stats(cluster, commits)
        # Commits dominate the topic, so these two take a handful of queries per batch, not one per group.
        RecorderPosition.objects.bulk_create(
            [RecorderPosition(cluster=cluster, partition=p, next_offset=o) for p, o in positions.items()],
            update_conflicts=True, unique_fields=["cluster", "partition"], update_fields=["next_offset"])
    return len(snapshots)


def _tally_commit(tally: dict[bytes, list[int]], group: bytes, stamp: int) -> None:
    seen = tally.get(group)
    if seen is None:
        tally[group] = [1, stamp]
    else:
        seen[0] += 1
        if stamp > seen[1]:
            seen[1] = stamp


def _commits_by_group(tally: dict[bytes, list[int]]) -> dict[str, tuple[int, int]]:
    """The batch's tally by group name: (commits, latest commit time in ms). Groups too long to store are left out,
    as are ids that are not UTF-8 (the broker never writes one; a damaged record could)."""
    commits = {}
    for raw, (count, latest) in tally.items():
        try:
            group = raw.decode("utf-8")
        except UnicodeDecodeError:
            log.warning("Skipping %s offset commits of a group id that is not UTF-8: %r", count, raw[:80])
            continue
        if len(group) <= GROUP_ID_MAX_STORED:
            commits[group] = (count, latest)
    return commits


def _store_commit_stats(cluster: str, commits: dict[str, tuple[int, int]]) -> None:
    """Adds the batch's commits to each group's row in one INSERT ... ON CONFLICT DO UPDATE (SQLite and PostgreSQL
    alike). The ORM's upsert can only overwrite a column, not add to it; reading the rows first to add in Python
    took a SELECT and an UPDATE with a CASE per row, which was most of the recorder's time on a backlog."""
    if not commits:
        return
    quote, meta = connection.ops.quote_name, GroupCommitStat._meta
    table = quote(meta.db_table)
    cluster_col, group_col, commits_col, last_col = (quote(meta.get_field(name).column)
                                                     for name in ("cluster", "group", "commits", "last_commit_at"))
    sql = (f"INSERT INTO {table} ({cluster_col}, {group_col}, {commits_col}, {last_col}) VALUES (%s, %s, %s, %s) "
           f"ON CONFLICT ({cluster_col}, {group_col}) DO UPDATE SET "
           f"{commits_col} = {table}.{commits_col} + EXCLUDED.{commits_col}, "
           f"{last_col} = CASE WHEN EXCLUDED.{last_col} > {table}.{last_col} THEN EXCLUDED.{last_col} "
           f"ELSE {table}.{last_col} END")
    adapt = connection.ops.adapt_datetimefield_value
    # Sorted, so two writers of one cluster's rows (a recorder restarted while the old one finishes) lock alike.
    rows = [(cluster, group, count, adapt(_time(latest))) for group, (count, latest) in sorted(commits.items())]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def record_from_topic(cluster: str, *, should_stop: Callable[[], bool], until_caught_up: bool = False,
                      max_records: int | None = None, batch_size: int = 10_000) -> int:
    """Tails the internal topic from the saved positions. Returns the number of records read.

    A batch is one transaction: on a backlog, 10,000 records make its commit and queries a small share of the work
    (and a few MB of memory); once caught up, the tail hands over what it has as soon as it reaches the end."""
    positions = dict(RecorderPosition.objects.filter(cluster=cluster).values_list("partition", "next_offset"))
    states = {s.group: s.state for s in ConsumerGroupState.objects.filter(cluster=cluster)}
    names = TopicNames(cluster)
    connection = cluster_connection(cluster_get(cluster))
    tail = TopicTail(connection, OFFSETS_TOPIC, positions, timeout=10)
    read, noted_at = 0, 0.0
    try:
        while not should_stop():
            wanted = batch_size if max_records is None else min(batch_size, max_records - read)
            if wanted <= 0:
                break
            batch = tail.poll(wanted, timeout=0.5)
            if batch:
                store_batch(cluster, batch, states, names)
                read += len(batch)
            # A short batch is the tail's sign that it reached the end (or waited long enough): only then may
            # the backlog be over, so the status is not looked at after every full batch.
            if time.monotonic() - noted_at >= STATUS_EVERY_S or (len(batch) < wanted and until_caught_up):
                # The ends are mostly the high watermarks the fetch responses already carried: no extra round trip.
                behind = tail.behind()
                caught_up = behind == 0
                if caught_up:
                    recorder_status_note(cluster, RecorderStatus.RECORDING, up_to=datetime.now(UTC), behind=0)
                else:
                    last = _time(batch[-1].timestamp) if batch else None
                    recorder_status_note(cluster, RecorderStatus.RECORDING, detail=MSG_CATCHING_UP, up_to=last,
                                         behind=behind)
                noted_at = time.monotonic()
                if caught_up and until_caught_up:
                    break
    finally:
        tail.close()
    return read


def sample_groups(cluster: str) -> int:
    """One round of the fallback: a sampled generation for every group whose members or assignment changed."""
    admin = cluster_admin(cluster)
    ids = [g.group_id for g in admin.list_groups()]
    created = 0
    ids = [i for i in ids if len(i) <= GROUP_ID_MAX_STORED]
    for group_id, description in admin.describe_groups(ids).items():
        members = sorted(({"member_id": m.member_id, "client_id": m.client_id, "host": m.host,
                           "instance_id": m.instance_id,
                           "assignment": [[r.topic, r.partition] for r in m.assignment]}
                          for m in description.members), key=lambda m: m["member_id"])
        last = GroupGeneration.objects.filter(cluster=cluster, group=group_id, sampled=True).order_by("-generation").first()
        if last is not None and last.members == members:
            continue
        if last is None and not members:
            continue
        GroupGeneration.objects.create(cluster=cluster, group=group_id, protocol=description.protocol,
                                       generation=(last.generation + 1) if last else 1, time=datetime.now(UTC),
                                       members=members, assignor=description.assignor, sampled=True)
        created += 1
    return created


def run(cluster: str, *, should_stop: Callable[[], bool], force_sampling: bool = False) -> None:
    """Tails the internal topic for as long as it runs. Not authorized to read it: samples DescribeGroups instead.
    Topic not created yet (no group ever committed): samples meanwhile and tries again. Cluster down: waits."""
    sampling_only = force_sampling
    why_sampling = "Sampling group descriptions (--sample)." if force_sampling else ""
    try:
        while not should_stop():
            if not sampling_only:
                try:
                    record_from_topic(cluster, should_stop=should_stop)
                    return
                except NotAuthorized as exc:
                    why_sampling = MSG_NOT_ALLOWED.format(detail=exc.message, interval=SAMPLE_INTERVAL_S)
                    log.warning("%s: %s", cluster, why_sampling)
                    sampling_only = True
                except TopicNotFound:
                    why_sampling = MSG_NO_OFFSETS_TOPIC
                    log.info("%s: %s", cluster, why_sampling)
                except ClusterUnavailable as exc:
                    log.warning("%s; trying again in %ss", exc.message, SAMPLE_INTERVAL_S)
                    recorder_status_note(cluster, RecorderStatus.WAITING, detail=exc.message)
                    _sleep(SAMPLE_INTERVAL_S, should_stop)
                    continue
            try:
                sample_groups(cluster)
                recorder_status_note(cluster, RecorderStatus.SAMPLING, detail=why_sampling, up_to=datetime.now(UTC))
            except (ClusterUnavailable, NotAuthorized) as exc:
                log.warning("%s; trying again in %ss", exc.message, SAMPLE_INTERVAL_S)
                recorder_status_note(cluster, RecorderStatus.WAITING, detail=exc.message)
            _sleep(SAMPLE_INTERVAL_S, should_stop)
    finally:
        recorder_status_note(cluster, RecorderStatus.STOPPED, detail="The recorder stopped.")


def _sleep(seconds: float, should_stop: Callable[[], bool]) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not should_stop():
        time.sleep(0.2)
