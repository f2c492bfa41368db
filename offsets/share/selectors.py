"""Reads for share groups (KIP-932): a group's members and, per partition, its share-partition start offset and
lag, as `kafka-share-groups --describe --offsets` shows them; and the dry run of a reset of those start offsets."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from console.kafka.ops_offsets import EARLIEST, LATEST
from console.kafka.types import PartitionRef, ShareGroupDescription
from offsets.resets.planning import (
    AllTopics, ResetPlan, Strategy, ToDatetime, ToEarliest, ToLatest, ToRecorded, TopicScope,
)
from offsets.resets.preview import plan_from_state

# What `kafka-share-groups --reset-offsets` offers (plus the console's revert to an audited "before").
SHARE_STRATEGIES = (ToEarliest, ToLatest, ToDatetime, ToRecorded)
MSG_SHARE_STRATEGY = ("Share groups reset with --to-earliest, --to-latest or --to-datetime, as kafka-share-groups "
                      "does; {strategy} is for consumer groups.")
MSG_NOT_A_SHARE_GROUP = "'{group}' is not a share group on cluster '{cluster}'."


@dataclass(frozen=True)
class SharePartitionRow:
    ref: PartitionRef
    start_offset: int | None
    lag: int | None
    leader_epoch: int | None
    log_start: int
    log_end: int
    owners: tuple[str, ...]  # client id @ host of the members assigned to it


@dataclass(frozen=True)
class ShareGroupDetail:
    description: ShareGroupDescription
    partitions: list[SharePartitionRow]

    @property
    def total_lag(self) -> int | None:
        lags = [p.lag for p in self.partitions if p.lag is not None]
        return sum(lags) if lags else None


def share_group_ids(cluster: str) -> set[str]:
    return {g.group_id for g in cluster_admin(cluster).list_groups_of_every_type() if g.group_type == "share"}


def share_group_detail(cluster: str, group: str) -> ShareGroupDetail:
    admin = cluster_admin(cluster)
    description = admin.describe_share_groups([group])[group]
    offsets = admin.share_group_offsets([group]).get(group, {})
    refs = sorted(offsets)
    ends = admin.list_offsets_many(refs, [EARLIEST, LATEST], strict=False) if refs else {EARLIEST: {}, LATEST: {}}
    owners: dict[PartitionRef, list[str]] = {}
    for member in description.members:
        for ref in member.assignment:
            owners.setdefault(ref, []).append(f"{member.client_id}@{member.host}")
    rows = []
    for ref in refs:
        start, end = ends[EARLIEST].get(ref), ends[LATEST].get(ref)
        info = offsets[ref]
        rows.append(SharePartitionRow(ref=ref, start_offset=info.start_offset, lag=info.lag,
                                      leader_epoch=info.leader_epoch, log_start=start.offset if start else -1,
                                      log_end=end.offset if end else -1, owners=tuple(sorted(owners.get(ref, ())))))
    return ShareGroupDetail(description=description, partitions=rows)


def share_fingerprint(starts: dict[PartitionRef, int], refs: Sequence[PartitionRef]) -> str:
    payload = json.dumps([[r.topic, r.partition, starts.get(r)] for r in sorted(refs)])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ShareResetPreview:
    plan: ResetPlan
    state: str
    members: int
    starts: dict[PartitionRef, int]
    fingerprint: str

    @property
    def allowed(self) -> bool:
        return self.state in ("Empty", "Dead")


def share_reset_preview(cluster: str, group: str, scope: AllTopics | Sequence[TopicScope], strategy: Strategy, *,
                        now_ms: int | None = None) -> ShareResetPreview:
    """What `kafka-share-groups --reset-offsets --dry-run` computes: the partitions of the scope (with --all-topics
    those the group has start offsets for) and their new start offset."""
    if not isinstance(strategy, SHARE_STRATEGIES):
        raise ConsoleError(MSG_SHARE_STRATEGY.format(strategy=type(strategy).__name__))
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    admin = cluster_admin(cluster)
    description = admin.describe_share_groups([group])[group]
    starts = {ref: o.start_offset for ref, o in admin.share_group_offsets([group]).get(group, {}).items()
              if o.start_offset is not None}
    plan = plan_from_state(admin, group, scope, strategy, committed=starts, now_ms=now_ms)
    return ShareResetPreview(plan=plan, state=description.state, members=len(description.members), starts=starts,
                             fingerprint=share_fingerprint(starts, [r.ref for r in plan.rows]))
