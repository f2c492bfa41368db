"""The group recorder: tails `__consumer_offsets` into rebalance history, or samples DescribeGroups when the
internal topic may not be read. Each batch's rows and the read positions are saved in one transaction, so a
restart neither loses nor duplicates history."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime

from django.db import transaction

from console.clusters.models import Cluster
from console.clusters.selectors import cluster_admin, cluster_connection, cluster_get
from console.kafka.errors import ClusterUnavailable, NotAuthorized, TopicNotFound
from console.kafka.reader import RawRecord, TopicTail
from offsets.history.timeline import Snapshot, apply_record
from offsets.models import GROUP_ID_MAX_STORED, ConsumerGroupState, GroupCommitStat, GroupGeneration, RecorderPosition, RecorderStatus
from offsets.history.records import ClassicGroup, OffsetCommit, RecordDecodeError, decode_record

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
    commits: dict[str, list[int]] = defaultdict(list)
    touched: set[str] = set()
    positions: dict[int, int] = {}
    for record in records:
        positions[record.partition] = record.offset + 1
        try:
            decoded = decode_record(record.key, record.value)
        except RecordDecodeError as exc:
            log.warning("Skipping %s-%s@%s: %s", OFFSETS_TOPIC, record.partition, record.offset, exc)
            continue
        if len(getattr(decoded, "group", "") or "") > GROUP_ID_MAX_STORED:
            continue  # kept out of storage (see GROUP_ID_MAX_STORED); shown live on its pages
        if isinstance(decoded, OffsetCommit):
            if decoded.offset is not None:
                commits[decoded.group].append(decoded.commit_timestamp or record.timestamp)
            continue
        group = getattr(decoded, "group", None)
        if group is not None and not isinstance(decoded, ClassicGroup):
            touched.add(group)
        snapshots += apply_record(decoded, states, names, record.timestamp)
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


def _store_commit_stats(cluster: str, commits: dict[str, list[int]]) -> None:
    stats = {s.group: s for s in GroupCommitStat.objects.filter(cluster=cluster, group__in=list(commits))}
    new = []
    for group, stamps in commits.items():
        latest = _time(max(stamps))
        stat = stats.get(group)
        if stat is None:
            new.append(GroupCommitStat(cluster=cluster, group=group, last_commit_at=latest, commits=len(stamps)))
        else:
            stat.commits += len(stamps)
            stat.last_commit_at = max(stat.last_commit_at, latest)
    GroupCommitStat.objects.bulk_create(new, batch_size=500)
    GroupCommitStat.objects.bulk_update(list(stats.values()), ["commits", "last_commit_at"], batch_size=500)


def record_from_topic(cluster: str, *, should_stop: Callable[[], bool], until_caught_up: bool = False,
                      max_records: int | None = None, batch_size: int = 2000) -> int:
    """Tails the internal topic from the saved positions. Returns the number of records read."""
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
            if time.monotonic() - noted_at >= STATUS_EVERY_S or (not batch and until_caught_up):
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
