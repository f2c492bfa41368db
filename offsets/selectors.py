"""Reads for consumer groups: the list with lag and one group in detail (reset previews: offsets.resets)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings
from django.db import connections

from console.clusters.selectors import check_answering, cluster_admin, patient_admin
from gateway.kafka.errors import MSG_GROUP_NOT_FOUND, GroupNotFound, KafkaGatewayError
from gateway.kafka.types import EARLIEST, LATEST, STABLE, GroupDescription, GroupListing, PartitionRef
from console.shared_table import Snapshot, connection_version
from console.timing import in_request
from offsets import group_table
from offsets.committed import committed_offsets
from offsets.group_listing import OTHER_TYPES, confirm_missing_gone, groups_of_every_type_of
from offsets.lag.selectors import group_status_briefs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GroupRow:
    group_id: str
    protocol: str
    state: str
    members: int
    topics: tuple[str, ...]
    lag: int | None  # None when the group has no committed offsets


def group_listings(cluster: str) -> list[GroupListing]:
    """Every consumer group's (classic and consumer protocol) id, protocol and state: one ListGroups."""
    return cluster_admin(cluster).list_groups()


def groups_of_every_type(cluster: str) -> tuple[list[GroupListing], str]:
    """Consumer, share and streams groups in one listing (offsets/group_listing.py) and, if only the consumer
    groups could be listed, why."""
    return groups_of_every_type_of(cluster_admin(cluster))


def group_rows(cluster: str, listings: Sequence[GroupListing] | None = None) -> list[GroupRow]:
    """State, members, topics and total lag of the listed groups (default: all of them): one DescribeGroups for
    all, asked while their committed offsets (one OffsetFetch per coordinator, offsets/committed.py) and then one
    ListOffsets round for every committed partition are. A listed group that is gone by now (deleted by another
    client since it was listed) is left out."""
    admin = cluster_admin(cluster)
    listings = admin.list_groups() if listings is None else listings
    typed_rows = _typed_rows(_share_rows, admin, [g.group_id for g in listings if g.group_type == "share"])
    typed_rows.update(_typed_rows(_streams_rows, admin, [g.group_id for g in listings if g.group_type == "streams"]))
    ids = [g.group_id for g in listings if g.group_type not in OTHER_TYPES]
    described, committed, ends = {}, {}, {}
    if ids:
        # Side by side: for a page of 50 groups each takes a good part of the page's time.
        with ThreadPoolExecutor(max_workers=1) as pool:
            describing = pool.submit(in_request(admin.describe_groups), ids)
            committed = committed_offsets(admin, ids)
            refs = sorted({ref for offsets in committed.values() for ref in offsets})
            ends = admin.list_offsets_many(refs, [LATEST], strict=False)[LATEST] if refs else {}
            described = describing.result()
    rows = []
    for listing in listings:
        if listing.group_type in OTHER_TYPES:
            if listing.group_id in typed_rows:
                rows.append(typed_rows[listing.group_id])
            continue
        offsets = committed.get(listing.group_id, {})
        description = described.get(listing.group_id)
        if description is not None and description.state == "Dead" and not offsets:
            continue
        known = [(ref, o) for ref, o in offsets.items() if ref in ends]
        rows.append(GroupRow(
            group_id=listing.group_id, protocol=listing.protocol,
            state=description.state if description else listing.state,
            members=len(description.members) if description else 0,
            topics=tuple(sorted({ref.topic for ref in offsets})),
            lag=sum(max(0, ends[ref].offset - o) for ref, o in known) if known else None,
        ))
    return rows


def _typed_rows(rows_of, admin, group_ids: list[str]) -> dict[str, GroupRow]:
    """Share or streams rows for all the groups at once; Kafka fails the whole request for one unknown id, so then
    each is asked alone and the ones gone are left out (rare: a group deleted since the list was taken)."""
    if not group_ids:
        return {}
    try:
        return rows_of(admin, group_ids)
    except GroupNotFound:
        rows = {}
        for group_id in group_ids:
            try:
                rows.update(rows_of(admin, [group_id]))
            except GroupNotFound:
                pass
        return rows


def _share_rows(admin, group_ids: list[str]) -> dict[str, GroupRow]:
    """Share groups: one ShareGroupDescribe and one start-offsets request for all of them; the lag is the
    coordinator's (what kafka-share-groups --describe --offsets prints)."""
    described = admin.describe_share_groups(group_ids)
    offsets = admin.share_group_offsets(group_ids)
    rows = {}
    for group_id in group_ids:
        description, starts = described.get(group_id), offsets.get(group_id, {})
        lags = [o.lag for o in starts.values() if o.lag is not None]
        rows[group_id] = GroupRow(group_id=group_id, protocol="share",
                                  state=description.state if description else "Unknown",
                                  members=len(description.members) if description else 0,
                                  topics=tuple(sorted({ref.topic for ref in starts})),
                                  lag=sum(lags) if lags else None)
    return rows


def _streams_rows(admin, group_ids: list[str]) -> dict[str, GroupRow]:
    """Streams groups: one StreamsGroupDescribe, one offsets request and one ListOffsets round for all of them."""
    described = admin.describe_streams_groups(group_ids)
    committed = admin.streams_group_offsets(group_ids)
    refs = sorted({ref for offsets in committed.values() for ref in offsets})
    ends = admin.list_offsets_many(refs, [LATEST], strict=False)[LATEST] if refs else {}
    rows = {}
    for group_id in group_ids:
        description, offsets = described.get(group_id), committed.get(group_id, {})
        known = [(ref, o) for ref, o in offsets.items() if ref in ends]
        rows[group_id] = GroupRow(group_id=group_id, protocol="streams",
                                  state=description.state if description else "Unknown",
                                  members=len(description.members) if description else 0,
                                  topics=tuple(sorted({ref.topic for ref in offsets})),
                                  lag=sum(max(0, ends[ref].offset - o) for ref, o in known) if known else None)
    return rows


def group_table_snapshot(cluster: str) -> Snapshot | None:
    """The cluster's shared groups list, never built here: None while there is none yet (a rebuild is started in
    the background then, and when the one found is older than its jobs should allow). See offsets/group_table.py."""
    admin = cluster_admin(cluster)
    version = connection_version(admin.connection)
    found = group_table.TABLE.read(cluster, version)
    if found is None or found.age_s > group_table.TABLE.stale_after(found):
        patient = _patient(admin)
        group_table.TABLE.refresh_in_background(cluster, version, lambda: _built_in_thread(patient))
    if found is None:
        # One small request, so that a cluster that is down says so (503) instead of "being built" forever.
        admin.describe_cluster()
    return found


def group_snapshot_refresh(cluster: str, *, wait_s: float = 0.0, unless_younger_than_s: float | None = None
                           ) -> Snapshot | None:
    """Rebuilds the cluster's shared groups list now, with the longer bounds of a background job; None when
    another process is already rebuilding it (after waiting up to `wait_s`), or when the one there is younger
    than `unless_younger_than_s` (the lag sweep refreshed it)."""
    admin = _patient(cluster_admin(cluster))
    version = connection_version(admin.connection)
    if unless_younger_than_s is not None:
        found = group_table.TABLE.read(cluster, version)
        if found is not None and found.age_s < unless_younger_than_s:
            return None
    return group_table.TABLE.refresh(cluster, version, lambda: _build_group_table(admin), wait_s=wait_s)


def group_snapshot_from_listing(cluster: str, listings: list[GroupListing], problem: str,
                                taken_at: float) -> Snapshot | None:
    """After a lag sweep: the cluster's list rebuilt from the listing the sweep made (no ListGroups of its own)
    and the statuses the sweep just stored. None when another process is rebuilding it."""
    admin = cluster_admin(cluster)
    version = connection_version(admin.connection)
    try:
        _confirm_listing(admin, version, listings)
    except KafkaGatewayError as exc:
        log.warning("Not publishing the groups list of %s from the lag sweep: %s", cluster, exc.message)
        return None
    return group_table.TABLE.refresh(cluster, version, lambda: Snapshot(
        rows=group_table.entries(listings, group_status_briefs(cluster)), taken_at=taken_at,
        complete=not problem, note=problem))


def _confirm_listing(admin, version: str, listings: list[GroupListing]) -> None:
    """The new listing against the list published before it (offsets/group_listing.py: confirm_missing_gone)."""
    found = group_table.TABLE.read(admin.cluster, version)
    if found is not None:
        confirm_missing_gone(admin, listings, {row.group_id: row.kind for row in found.rows})


def _patient(admin):
    """The same gateway with a rebuild's longer bound on each call (a page's stays KAFKA_REQUEST_TIMEOUT_S)."""
    return patient_admin(admin, settings.GROUP_SNAPSHOT_TIMEOUT_S)


def _build_group_table(admin) -> Snapshot:
    """Every group of every type (two ListGroups, side by side) and every group's last status and lag (one
    query): a row each. Share and streams groups that could not be listed make the snapshot incomplete, and
    the page says why."""
    taken_at = time.time()
    check_answering(admin)
    listings, problem = groups_of_every_type_of(admin)
    _confirm_listing(admin, connection_version(admin.connection), listings)
    rows = group_table.entries(listings, group_status_briefs(admin.cluster))
    return Snapshot(rows=rows, taken_at=taken_at, complete=not problem, note=problem)


def _built_in_thread(admin) -> Snapshot:
    try:
        return _build_group_table(admin)
    finally:
        connections.close_all()  # this thread's own database connections, which nothing else would close


@dataclass(frozen=True)
class PartitionLag:
    ref: PartitionRef
    committed: int | None
    log_start: int
    log_end: int
    owner: str  # client id @ host of the member assigned to it, if any
    last_stable: int | None = None
    blocking: object | None = None  # transactions.selectors.BlockingTransaction the group waits on

    @property
    def key(self) -> str:
        """"topic-partition", as lag statuses name partitions."""
        return str(self.ref)

    @property
    def lag(self) -> int | None:
        return None if self.committed is None else max(0, self.log_end - self.committed)

    @property
    def at_open_transaction(self) -> bool:
        """Sitting at the last stable offset with log beyond it: a read_committed reader waits for a transaction."""
        return self.committed is not None and self.committed == self.last_stable and self.last_stable < self.log_end


@dataclass(frozen=True)
class GroupDetail:
    description: GroupDescription
    partitions: list[PartitionLag]

    @property
    def total_lag(self) -> int:
        return sum(p.lag or 0 for p in self.partitions)


def group_detail(cluster: str, group: str) -> GroupDetail:
    """The group's members and, per partition it has commits for or is assigned, committed offset and lag."""
    admin = cluster_admin(cluster)
    # Side by side, as group_rows asks them: two round trips of a page that makes four.
    with ThreadPoolExecutor(max_workers=1) as pool:
        describing = pool.submit(in_request(admin.describe_groups), [group])
        committed = admin.group_offsets([group])[group]
        description = describing.result()[group]
    if description.state == "Dead" and not committed:
        raise GroupNotFound(MSG_GROUP_NOT_FOUND.format(group=group, cluster=cluster), cluster=cluster)
    owners = {ref: f"{m.client_id}@{m.host}" for m in description.members for ref in m.assignment}
    refs = sorted(set(committed) | set(owners))
    offsets = admin.list_offsets_many(refs, [EARLIEST, LATEST, STABLE], strict=False)
    partitions = [
        PartitionLag(ref=ref, committed=committed.get(ref), log_start=offsets[EARLIEST][ref].offset,
                     log_end=offsets[LATEST][ref].offset, owner=owners.get(ref, ""),
                     last_stable=offsets[STABLE][ref].offset if ref in offsets[STABLE] else None)
        for ref in refs if ref in offsets[EARLIEST] and ref in offsets[LATEST]
    ]
    waiting = [p for p in partitions if p.at_open_transaction]
    if waiting:
        partitions = _with_blocking_transactions(cluster, partitions, waiting)
    return GroupDetail(description=description, partitions=partitions)


def _with_blocking_transactions(cluster: str, partitions: list[PartitionLag],
                                waiting: list[PartitionLag]) -> list[PartitionLag]:
    from dataclasses import replace

    from transactions.selectors import StableOffsets, blocking_transactions

    try:
        found = blocking_transactions(cluster, [StableOffsets(p.ref, p.last_stable, p.log_end) for p in waiting])
    except KafkaGatewayError:  # the page still says the group waits at the last stable offset
        return partitions
    return [replace(p, blocking=found.get(p.ref)) for p in partitions]
