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
from gateway.kafka.errors import ClusterUnavailable, NotAuthorized, TopicNotFound
from gateway.kafka.records_io.reader import TailBatch, TopicTail
from offsets.history.timeline import Settled, Snapshot, apply_record
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


_UNSEEN = object()
_EARLIEST = -(2 ** 63)


def store_batch(cluster: str, batch: TailBatch, states: dict[str, dict], names: Callable[[str], str]) -> int:
    """Decodes a batch and saves what it derives together with the new read positions. Returns snapshots saved.

    Offset commits are nearly every record and only counted, so their loop does the least per record: one dict
    lookup by key (a group commits the same partitions again and again, so a key's kind is worked out once per
    batch), the commit time read in place, and the count and latest time kept per key, summed by group after the
    loop. Anything else is kept by index and decoded in full, in log order, after the loop."""
    by_key: dict = {}  # key → [commits, latest commit time in ms, group id bytes] for a commit key, else None
    others: list[int] = []  # indexes of records that are not plain offset commits
    for index, (key, value) in enumerate(zip(batch.keys, batch.values)):
        seen = by_key.get(key, _UNSEEN)
        if seen is _UNSEEN:
            group = commit_group(key)
            seen = by_key[key] = None if group is None else [0, _EARLIEST, group]
        if seen is None:
            others.append(index)
            continue
        if value is None:
            continue  # an offset deleted or expired: not a commit
        stamp = commit_timestamp(value)
        if stamp is None:
            others.append(index)  # a commit value the shortcut does not know: the full decoder's
            continue
        if not stamp:
            stamp = batch.record(index).timestamp
        seen[0] += 1
        if stamp > seen[1]:
            seen[1] = stamp
    tally: dict[bytes, list[int]] = {}  # group id bytes → [commits, latest commit time in ms]
    for seen in by_key.values():
        if seen is not None and seen[0]:
            _tally_commit(tally, seen[2], seen[1], seen[0])
    snapshots: list[Snapshot | Settled] = []
    touched: set[str] = set()
    for index in others:
        partition, offset, timestamp, key, value = batch.record(index)
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
        _store_snapshots(cluster, snapshots)
        _store_states(cluster, touched, states)
        # Commits dominate the topic, so these two are a statement or two per batch, not one per group.
        _store_commit_stats(cluster, commits)
        _store_positions(cluster, batch.positions)
    return sum(1 for snap in snapshots if isinstance(snap, Snapshot))


def _store_snapshots(cluster: str, snapshots: list[Snapshot | Settled]) -> None:
    """One upsert for the batch's generations; a generation seen twice in a batch is saved as it was last. Then the
    epochs that settled, after the upsert that may have made their rows (one statement each: an epoch settles once
    per rebalance, a few per batch against the thousands of commits)."""
    latest = {(snap.group, snap.protocol, snap.generation): snap for snap in snapshots if isinstance(snap, Snapshot)}
    if latest:
        GroupGeneration.objects.bulk_create(
            [GroupGeneration(cluster=cluster, group=snap.group, protocol=snap.protocol, generation=snap.generation,
                             sampled=False, time=_time(snap.time_ms), members=snap.members, assignor=snap.assignor,
                             leader=snap.leader) for snap in latest.values()],
            update_conflicts=True, unique_fields=["cluster", "group", "protocol", "generation", "sampled"],
            update_fields=["time", "members", "assignor", "leader"], batch_size=ROWS_PER_STATEMENT)
    for settled in (snap for snap in snapshots if isinstance(snap, Settled)):
        GroupGeneration.objects.filter(cluster=cluster, group=settled.group, protocol=settled.protocol,
                                       generation=settled.generation, sampled=False).update(
            settled_at=_time(settled.time_ms))


def _store_states(cluster: str, touched: set[str], states: dict[str, dict]) -> None:
    """The KIP-848 groups' reconstructed state, upserted in one statement; groups deleted meanwhile lose theirs."""
    kept = sorted(group for group in touched if group in states)
    if kept:
        ConsumerGroupState.objects.bulk_create(
            [ConsumerGroupState(cluster=cluster, group=group, state=states[group]) for group in kept],
            update_conflicts=True, unique_fields=["cluster", "group"], update_fields=["state"],
            batch_size=ROWS_PER_STATEMENT)
    gone = sorted(touched.difference(kept))
    for start in range(0, len(gone), ROWS_PER_STATEMENT):
        ConsumerGroupState.objects.filter(cluster=cluster, group__in=gone[start:start + ROWS_PER_STATEMENT]).delete()


def _tally_commit(tally: dict[bytes, list[int]], group: bytes, stamp: int, count: int = 1) -> None:
    seen = tally.get(group)
    if seen is None:
        tally[group] = [count, stamp]
    else:
        seen[0] += count
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


ROWS_PER_STATEMENT = 500  # 4 values a row stays far below any backend's limit on parameters per statement


def _upsert(table_model, columns: tuple[str, ...], conflict: tuple[str, ...], update: str, rows: list[tuple]) -> None:
    """INSERT ... VALUES (...), (...) ON CONFLICT DO UPDATE SET `update`, ROWS_PER_STATEMENT rows a statement
    (SQLite and PostgreSQL alike): a batch is one statement or a few, not one per row."""
    quote, meta = connection.ops.quote_name, table_model._meta
    column = {name: quote(meta.get_field(name).column) for name in columns}
    table = quote(meta.db_table)
    update = update.format(table=table, **column)
    row = "(" + ", ".join(["%s"] * len(columns)) + ")"
    with connection.cursor() as cursor:
        for start in range(0, len(rows), ROWS_PER_STATEMENT):
            chunk = rows[start:start + ROWS_PER_STATEMENT]
            cursor.execute(
                f"INSERT INTO {table} ({', '.join(column.values())}) VALUES {', '.join([row] * len(chunk))} "
                f"ON CONFLICT ({', '.join(column[c] for c in conflict)}) DO UPDATE SET {update}",
                [value for values in chunk for value in values])


def _store_commit_stats(cluster: str, commits: dict[str, tuple[int, int]]) -> None:
    """Adds the batch's commits to each group's row. The ORM's upsert can only overwrite a column, not add to it;
    reading the rows first to add in Python took a SELECT and an UPDATE with a CASE per row, which was most of the
    recorder's time on a backlog."""
    if not commits:
        return
    adapt = connection.ops.adapt_datetimefield_value
    # Sorted, so two writers of one cluster's rows (a recorder restarted while the old one finishes) lock alike.
    rows = [(cluster, group, count, adapt(_time(latest))) for group, (count, latest) in sorted(commits.items())]
    _upsert(GroupCommitStat, ("cluster", "group", "commits", "last_commit_at"), ("cluster", "group"),
            "{commits} = {table}.{commits} + EXCLUDED.{commits}, {last_commit_at} = CASE WHEN "
            "EXCLUDED.{last_commit_at} > {table}.{last_commit_at} THEN EXCLUDED.{last_commit_at} "
            "ELSE {table}.{last_commit_at} END", rows)


def _store_positions(cluster: str, positions: dict[int, int]) -> None:
    if positions:
        _upsert(RecorderPosition, ("cluster", "partition", "next_offset"), ("cluster", "partition"),
                "{next_offset} = EXCLUDED.{next_offset}",
                [(cluster, partition, offset) for partition, offset in sorted(positions.items())])


def record_from_topic(cluster: str, *, should_stop: Callable[[], bool], until_caught_up: bool = False,
                      max_records: int | None = None, batch_size: int = 50_000) -> int:
    """Tails the internal topic from the saved positions. Returns the number of records read.

    A batch is one transaction: on a backlog, 50,000 records make its commit and statements a small share of the
    work (for about 20 MB of memory); once caught up, the tail hands over what it has as soon as it reaches the end."""
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
            batch = tail.poll_batch(wanted, timeout=0.5)
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
                    last = _time(batch.record(len(batch) - 1).timestamp) if batch else None
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
