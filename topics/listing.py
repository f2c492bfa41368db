"""The topic list: the shared topic table (topics/table.py) read, rebuilt, told of the console's own changes,
filtered and sorted for a page."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from django.conf import settings

from console.clusters.selectors import check_answering, cluster_admin
from console.errors import ConsoleError
from console.shared_table import CHANGE_GRACE_S, connection_version
from gateway.kafka.errors import KafkaGatewayError, TopicNotFound
from gateway.kafka.types import EARLIEST, LATEST, TOPIC, OffsetAt, PartitionRef, TopicMetadata
from gateway.user_regex import RegexRefused, compile_user_regex
from topics import config_cache, log_starts, table
from topics.table import TopicRow

from topics.background import background_admin, patient_admin

log = logging.getLogger(__name__)

UNKNOWN_CHECKED = 1000  # topics without offsets a rebuild asks about (one DescribeTopics); beyond, a broker is down

SORT_KEYS = {
    "name": lambda r: r.name,
    "partitions": lambda r: (r.partitions, r.name),
    "replication": lambda r: (r.replication_factor, r.name),
    "messages": lambda r: (-1 if r.messages is None else r.messages, r.name),
    "under_replicated": lambda r: (r.under_replicated + r.offline, r.name),
}


def _size_order(sizes: dict[str, int] | None):
    return lambda r: (-1 if sizes is None else sizes.get(r.name, 0), r.name)


def _version(admin) -> str:
    return connection_version(admin.connection)


def topic_table_snapshot(cluster: str) -> table.Snapshot | None:
    """The cluster's shared topic table, never built here: None while there is none yet (a rebuild is started in
    the background then, and when the one found is older than beat should allow). See topics/table.py."""
    admin = cluster_admin(cluster)
    version = _version(admin)
    found = table.read(cluster, version)
    if found is None or found.age_s > table.stale_after(found):
        refresh_admin = patient_admin(admin)
        table.refresh_in_background(cluster, version, lambda: _build_table(refresh_admin))
    if found is None:
        # One small request, so that a cluster that is down says so (503) instead of "being built" forever.
        admin.describe_cluster()
    return found


def topic_table(cluster: str) -> list[TopicRow]:
    """For the shell: the shared table, built now if there is none yet (or it is older than beat should allow)."""
    admin = background_admin(cluster)
    version = _version(admin)
    found = table.read(cluster, version)
    if found is None or found.age_s > table.stale_after(found):
        found = table.refresh(cluster, version, lambda: _build_table(admin),
                              wait_s=settings.TOPIC_SNAPSHOT_LOCK_S) or table.read(cluster, version)
    if found is None:
        raise ConsoleError(MSG_TABLE_BEING_BUILT.format(cluster=cluster))
    return found.rows


def topic_names(cluster: str, *, include_internal: bool = False) -> list[str]:
    """The cluster's topic names, for pickers: from the shared table when there is one, else one Metadata
    request (a picker must not wait for the table's first build)."""
    found = topic_table_snapshot(cluster)
    if found is not None:
        return sorted(r.name for r in found.rows if include_internal or not r.internal)
    return sorted(t.name for t in cluster_admin(cluster).list_topics() if include_internal or not t.is_internal)


MSG_TABLE_BEING_BUILT = "The topic list of '{cluster}' is being built by another process; ask again in a moment."


def topic_snapshot_refresh(cluster: str, *, wait_s: float = 0.0, only_when_due: bool = False
                           ) -> table.Snapshot | None:
    """Rebuilds the cluster's shared topic table now, with the longer bounds of a background job (what the beat
    task runs, `only_when_due`: when the shared one is as old as its interval or its own cost asks); None when
    another process is already rebuilding it (after waiting up to `wait_s` for it), or it was not due."""
    admin = background_admin(cluster)
    version = _version(admin)
    if only_when_due and not table.TABLE.due(cluster, version):
        return None
    return table.refresh(cluster, version, lambda: _build_table(admin), wait_s=wait_s)


def topic_snapshot_note(cluster: str, topic: str, *, deleted: bool = False, at_least_partitions: int = 0,
                        created: TopicRow | None = None) -> None:
    """After a change made through the console: the topic's row, read now (one DescribeTopics and ListOffsets
    over its partitions only), or its removal, becomes visible to every process at once. `created`: the row of
    a topic just created, for when the brokers do not show it yet. The change is done by then, so Kafka failing
    here only leaves the row to the next rebuild. The list's cached configs of the topic are forgotten too (a topic
    deleted and created again under its name has configs of its own)."""
    config_cache.forget(cluster, [topic])
    if deleted:
        table.note_change(cluster, topic, None)
        return
    admin = cluster_admin(cluster)
    try:
        metadata = admin.describe_topics([topic])[topic]
        refs = [PartitionRef(topic, p.partition) for p in metadata.partitions]
        row = _row(metadata, admin.list_offsets_many(refs, [EARLIEST, LATEST], strict=False))
    except TopicNotFound:  # not known to the broker that answered yet (just created), or deleted by another client
        table.note_change(cluster, topic, created)
        return
    except KafkaGatewayError as exc:
        log.warning("The topic table of %s learns of the change to %s with its next rebuild: %s", cluster, topic,
                    exc.message)
        if created is not None:
            table.note_change(cluster, topic, created)
        return
    # A broker may still answer from metadata older than the change it just acknowledged (seen in CI).
    if row.partitions < at_least_partitions:
        row = replace(row, partitions=at_least_partitions, messages=None)
    table.note_change(cluster, topic, row)


def topic_snapshot_note_partitions(cluster: str, totals: dict[str, int]) -> None:
    """After partitions were added to many topics through the console: their rows in the shared table show the new
    counts now, without a call per topic (messages stay: new partitions are empty); a topic the table does not hold
    yet waits for the next rebuild."""
    found = table.read(cluster, _version(cluster_admin(cluster)))
    if found is None:
        return
    rows = {row.name: row for row in found.rows}
    for name, total in totals.items():
        if name in rows:
            table.note_change(cluster, name, replace(rows[name], partitions=max(total, rows[name].partitions)))


def leader_windows(partitions: list[tuple[PartitionRef, int | None]], size: int) -> list[list[PartitionRef]]:
    """Pure: partitions in windows of at most `size` partitions per leader, so that each ListOffsets request (one
    per leader, per window) stays small and at most one per leader is in flight. Partitions without a leader are
    left out: their offsets cannot be read, and their topics' counts stay unknown."""
    by_leader: dict[int, list[PartitionRef]] = {}
    for ref, leader in partitions:
        if leader is not None:
            by_leader.setdefault(leader, []).append(ref)
    longest = max((len(refs) for refs in by_leader.values()), default=0)
    return [[ref for leader in sorted(by_leader) for ref in by_leader[leader][start:start + size]]
            for start in range(0, longest, size)]


def _build_table(admin) -> table.Snapshot:
    """One Metadata request for all topics and, beside it, one for their ids; then log ends of every partition and
    the log starts topics/log_starts.py does not remember, in windows per leader."""
    taken_at = time.time()
    check_answering(admin)
    cluster, version = admin.cluster, _version(admin)
    memory = log_starts.read(cluster, version)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="topic-ids") as pool:
        asking_ids = pool.submit(_topic_ids, admin)
        topics = admin.list_topics()
        listed = time.monotonic()
        # Without a memory every start is asked: the ids are then needed only for the next rebuild, so the offsets
        # are not held up by them.
        ids = asking_ids.result() if memory is not None else {}
        turn = memory.turn + 1 if memory is not None else 0
        changed = table.changed_since(cluster, memory.taken_at - CHANGE_GRACE_S) if memory is not None else set()
        starts_plan = log_starts.plan(topics, ids, memory, changed=changed, turn=turn,
                                      rounds=settings.TOPIC_SNAPSHOT_START_ROUNDS)
        planned = time.monotonic()
        offsets = _offsets(admin, topics, starts_plan)
        ids = ids or asking_ids.result()
    log.debug("Topic table of %s: %d topics, %d partitions, %d log starts asked; Metadata %.2f s, then topic ids "
              "%.2f s, offsets %.2f s", cluster, len(topics), sum(t.partition_count for t in topics),
              len(starts_plan.ask), listed - started, planned - listed, time.monotonic() - planned)
    topics = _without_deleted_meanwhile(admin, topics, offsets)
    config_cache.forget(cluster, log_starts.renamed_or_new(memory, ids))
    log_starts.write(cluster, log_starts.remember(
        topics, ids, {ref: at.offset for ref, at in offsets[EARLIEST].items()}, version=version, taken_at=taken_at,
        turn=turn))
    rows = [_row(t, offsets) for t in topics]
    return table.Snapshot(rows=rows, taken_at=taken_at, complete=all(r.messages is not None for r in rows))


def _without_deleted_meanwhile(admin, topics: list[TopicMetadata], offsets: dict) -> list[TopicMetadata]:
    """Topics another client deleted between the Metadata request and the offsets (every few seconds on a cluster
    where CI pipelines make and drop topics) are left out, instead of showing with an unknown count that would also
    mark the table incomplete and bring its next rebuild forward. Only topics whose every partition has a leader
    and still lacks an offset are asked about (one DescribeTopics, at most UNKNOWN_CHECKED of them): an offline
    partition's topic is not gone."""
    unknown = [t.name for t in topics if all(p.leader is not None for p in t.partitions)
               and any(PartitionRef(t.name, p.partition) not in offsets[at] for p in t.partitions
                       for at in (EARLIEST, LATEST))]
    if not unknown or len(unknown) > UNKNOWN_CHECKED:
        return topics
    try:
        still_there = admin.describe_topics(unknown, skip_missing=True)
    except KafkaGatewayError as exc:
        log.warning("Topics of %s without offsets not checked (they show with unknown counts): %s", admin.cluster,
                    exc.message)
        return topics
    gone = set(unknown) - set(still_there)
    return [t for t in topics if t.name not in gone] if gone else topics


def _topic_ids(admin) -> dict[str, str]:
    """{name: topic id}, or none at all when they cannot be read (no Java here): every start is asked then."""
    try:
        return admin.topic_ids()
    except KafkaGatewayError as exc:
        log.warning("Topic ids of %s not read (every log start is asked): %s", admin.cluster, exc.message)
        return {}


def _offsets(admin, topics: list[TopicMetadata], starts_plan: log_starts.Plan) -> dict:
    """Log ends of every partition and the planned log starts, in windows per leader; a remembered start found past
    its partition's end is asked again."""
    partitions = [(PartitionRef(t.name, p.partition), p.leader) for t in topics for p in t.partitions]
    asked = set(starts_plan.ask)
    offsets: dict = {EARLIEST: {ref: OffsetAt(start) for ref, start in starts_plan.known.items()}, LATEST: {}}
    for window in leader_windows(partitions, settings.TOPIC_SNAPSHOT_WINDOW):
        # strict=False: an offline partition makes its topic's count unknown instead of failing the whole list.
        found = admin.list_offsets_of({EARLIEST: [ref for ref in window if ref in asked], LATEST: window},
                                      strict=False)
        for at in (EARLIEST, LATEST):
            offsets[at].update(found[at])
    behind = log_starts.past_their_end(starts_plan.known, {ref: at.offset for ref, at in offsets[LATEST].items()})
    if behind:
        for ref in behind:
            del offsets[EARLIEST][ref]
        offsets[EARLIEST].update(admin.list_offsets_of({EARLIEST: behind}, strict=False)[EARLIEST])
    return offsets


def _row(topic: TopicMetadata, offsets) -> TopicRow:
    messages: int | None = 0
    for p in topic.partitions:
        ref = PartitionRef(topic.name, p.partition)
        start, end = offsets[EARLIEST].get(ref), offsets[LATEST].get(ref)
        if start is None or end is None:
            messages = None
            break
        messages += max(0, end.offset - start.offset)
    return TopicRow(
        name=topic.name, partitions=topic.partition_count, replication_factor=topic.replication_factor,
        under_replicated=sum(p.under_replicated for p in topic.partitions),
        offline=sum(p.offline for p in topic.partitions), messages=messages, internal=topic.is_internal,
    )


def filter_topics(rows: list[TopicRow], *, query: str = "", regex: bool = False, include_internal: bool = False,
                  sort: str = "name", descending: bool = False, sizes: dict[str, int] | None = None
                  ) -> list[TopicRow]:
    """Pure: search by substring (case-insensitive) or regular expression, hide internal topics, sort (by size:
    from `sizes`, bytes per topic; None while unknown)."""
    if regex and query:
        try:
            pattern = compile_user_regex(query)
        except RegexRefused as exc:
            raise ConsoleError(str(exc), field="q") from None
        matches = lambda name: pattern.search(name) is not None  # noqa: E731
    else:
        needle = query.lower()
        matches = lambda name: needle in name.lower()  # noqa: E731
    picked = [r for r in rows if (include_internal or not r.internal) and matches(r.name)]
    order = _size_order(sizes) if sort == "size" else SORT_KEYS.get(sort, SORT_KEYS["name"])
    return sorted(picked, key=order, reverse=descending)


def with_configs(cluster: str, rows: list[TopicRow]) -> list[TopicRow]:
    """Adds cleanup.policy and retention to the rows shown: from the shared cache (topics/config_cache.py), and for
    the topics it does not hold, one DescribeConfigs round for all of them. A topic that another client deleted
    since the table was taken is left off the page when Kafka is asked (the next table drops it too)."""
    if not rows:
        return rows
    known = config_cache.read(cluster, [r.name for r in rows])
    missing = [r.name for r in rows if r.name not in known]
    if missing:
        described = cluster_admin(cluster).describe_configs(TOPIC, missing, skip_missing=True)
        asked = {name: tuple(entries[key].value if key in entries else None for key in config_cache.KEYS)
                 for name, entries in described.items()}
        config_cache.write(cluster, asked)
        known.update(asked)
    return [TopicRow(**{**r.__dict__, "cleanup_policy": known[r.name][0], "retention_ms": known[r.name][1],
                        "retention_bytes": known[r.name][2]})
            for r in rows if r.name in known]
