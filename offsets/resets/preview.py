"""The preview of an offset reset: what `kafka-consumer-groups --reset-offsets --dry-run` computes, from the
group's state read now, with the fingerprint execute checks against."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from console.kafka.ops_offsets import EARLIEST, LATEST
from console.kafka.types import PartitionRef
from offsets.resets.planning import (
    AllTopics,
    PlanError,
    ResetPlan,
    Strategy,
    TopicScope,
    plan_reset,
    reset_partitions,
    resolve_partitions,
    what_timestamps_needed,
)


def committed_fingerprint(committed: dict[PartitionRef, int], refs: Sequence[PartitionRef]) -> str:
    """A short digest of the committed offsets of `refs`: execute refuses when it changed since the preview."""
    payload = json.dumps([[r.topic, r.partition, committed.get(r)] for r in sorted(refs)])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ResetPreview:
    plan: ResetPlan
    state: str
    members: int
    committed: dict[PartitionRef, int]
    fingerprint: str

    @property
    def allowed(self) -> bool:
        return self.state in ("Empty", "Dead")


def plan_from_state(admin, group: str, scope: AllTopics | Sequence[TopicScope], strategy: Strategy, *,
                    committed: dict[PartitionRef, int], now_ms: int) -> ResetPlan:
    """The plan for the group's positions read already (committed offsets, or a share group's start offsets):
    the scope's partitions, then one ListOffsets round for the log offsets (and a timestamp) the strategy needs."""
    topics = [] if isinstance(scope, AllTopics) else sorted({s.topic for s in scope})
    partition_counts = {name: t.partition_count for name, t in admin.describe_topics(topics).items()}
    try:
        scope_partitions = resolve_partitions(scope, committed=committed, partition_counts=partition_counts)
        refs = reset_partitions(strategy, group=group, scope_partitions=scope_partitions)
        timestamp = what_timestamps_needed(strategy, now_ms)
        ats: list = [EARLIEST, LATEST] + ([timestamp] if timestamp is not None else [])
        offsets = admin.list_offsets_many(refs, ats)
        return plan_reset(group=group, partitions=scope_partitions, strategy=strategy, committed=committed,
                          log_start=offsets[EARLIEST], log_end=offsets[LATEST],
                          by_timestamp=offsets.get(timestamp) if timestamp is not None else None, now_ms=now_ms)
    except PlanError as exc:
        raise ConsoleError(exc.message) from exc


MSG_UNKNOWN_GROUP_RESET = ("Consumer group '{group}' does not exist on cluster '{cluster}' (no members, no committed "
                           "offsets). Check the name; the console does not create groups by resetting them.")


def reset_preview(cluster: str, group: str, scope: AllTopics | Sequence[TopicScope], strategy: Strategy, *,
                  now_ms: int | None = None) -> ResetPreview:
    """What `kafka-consumer-groups --reset-offsets --dry-run` computes, from the group's state read now."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    admin = cluster_admin(cluster)
    description = admin.describe_groups([group])[group]
    committed = admin.group_offsets([group])[group]
    if description.state == "Dead" and not committed:
        raise ConsoleError(MSG_UNKNOWN_GROUP_RESET.format(group=group, cluster=cluster))
    plan = plan_from_state(admin, group, scope, strategy, committed=committed, now_ms=now_ms)
    return ResetPreview(plan=plan, state=description.state, members=len(description.members), committed=committed,
                        fingerprint=committed_fingerprint(committed, [r.ref for r in plan.rows]))
