"""The preview of an offset reset: what the group kind's tool (`kafka-consumer-groups`, `kafka-share-groups`,
`kafka-streams-groups`) computes with `--reset-offsets --dry-run`, from the group's state read now, with the
fingerprint execute checks against."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.types import EARLIEST, LATEST, PartitionRef
from offsets.kinds import GroupKind, kind_for
from offsets.resets.planning import (
    AllTopics,
    PlanError,
    ResetPlan,
    Strategy,
    ToRecorded,
    TopicScope,
    plan_reset,
    reset_partitions,
    resolve_partitions,
    what_timestamps_needed,
)
from offsets.resets.strategy_input import STRATEGY_TYPES


def committed_fingerprint(committed: dict[PartitionRef, int], refs: Sequence[PartitionRef]) -> str:
    """A short digest of the positions of `refs`: execute refuses when it changed since the preview."""
    payload = json.dumps([[r.topic, r.partition, committed.get(r)] for r in sorted(refs)])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def plan_fingerprint(preview: ResetPreview) -> str:
    """A digest of the whole plan: the positions it starts from and every target. A change request keeps it, so
    that what another person approved is exactly what runs (a log end that moved changes a to-latest plan)."""
    rows = [[r.ref.topic, r.ref.partition, r.target] for r in preview.plan.rows]
    payload = json.dumps([preview.fingerprint, rows])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ResetPreview:
    plan: ResetPlan
    state: str
    members: int
    committed: dict[PartitionRef, int]  # a share group's start offsets
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


def check_strategy(kind: GroupKind, strategy: Strategy) -> None:
    """Refuses a strategy the kind's tool does not offer; a revert to an audited "before" is the console's own."""
    offered = {STRATEGY_TYPES[name] for name in kind.strategies} | {ToRecorded}
    if type(strategy) not in offered:
        raise ConsoleError(kind.msg_strategy.format(strategy=type(strategy).__name__))


def reset_preview(cluster: str, group: str, scope: AllTopics | Sequence[TopicScope], strategy: Strategy, *,
                  kind: GroupKind | None = None, now_ms: int | None = None) -> ResetPreview:
    """What `--reset-offsets --dry-run` of the kind's tool computes, from the group's state read now. Without
    `kind`, the group's kind is looked up."""
    kind = kind or kind_for(cluster, group)
    check_strategy(kind, strategy)
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    state = kind.reset_state(cluster, group)
    if isinstance(scope, AllTopics):
        topics = kind.topics_for_all(group, state)
        if topics is not None:
            scope = [TopicScope(topic, None) for topic in topics]
    plan = plan_from_state(cluster_admin(cluster), group, scope, strategy, committed=state.positions, now_ms=now_ms)
    return ResetPreview(plan=plan, state=state.state, members=state.members, committed=state.positions,
                        fingerprint=committed_fingerprint(state.positions, [r.ref for r in plan.rows]))
