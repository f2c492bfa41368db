"""The protocol migration page of a cluster: its groups by type, the groups still (partly) on the classic protocol
with their members and a readiness verdict each, the brokers' migration policy, the client software connected,
and the groups seen moving with their rebalances before and after. Reads only."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from brokers.client_software import ClusterSoftware, cluster_client_software
from console.clusters.selectors import cluster_admin
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import ProtocolGroupDescription
from offsets.history.selectors import duration_words
from offsets.models import GroupGeneration, GroupTypeChange
from offsets.protocols.readiness import POLICIES, Verdict, verdict
from offsets.selectors import groups_of_every_type

POLICY_CONFIG = "group.consumer.migration.policy"
TYPES = ("classic", "consumer", "share", "streams")
# Classic and consumer groups described per page load; past it the page says how many it left out.
DESCRIBE_AT_MOST = 500
POLICY_BROKERS_AT_MOST = 10
MSG_POLICY_DIFFERS = "the brokers disagree ({values})"
MSG_NOT_DESCRIBED = ("{left:,} of {total:,} classic and consumer groups were not described (at most {limit:,} per "
                     "page load): filter the groups list by type to see them.")
HISTORY_WINDOW = timedelta(days=7)  # rebalances counted on each side of a move, at most


@dataclass(frozen=True)
class GroupToMove:
    description: ProtocolGroupDescription
    verdict: Verdict


@dataclass(frozen=True)
class RebalanceStats:
    """Generations (classic) or assignment epochs (consumer) the recorder stored in a window, and the mean time
    between them; for assignment epochs also how long their members took to reconcile (from the new target
    assignment until the last member reported it), where the recorder saw them settle. Kafka writes nothing when a
    classic rebalance begins, so classic generations have no duration."""

    count: int
    window_s: float
    mean_gap_s: float | None
    settled: int = 0
    mean_settle_s: float | None = None
    max_settle_s: float | None = None

    @property
    def window_words(self) -> str:
        return duration_words(self.window_s)


@dataclass(frozen=True)
class Move:
    group: str
    before: str
    after: str
    at: datetime  # the sweep that first saw the new type
    previous_sweep_at: datetime | None  # the last sweep that listed types before it: the move is in between
    recorded_at: datetime | None  # the first generation of the new protocol the recorder stored, if any
    before_stats: RebalanceStats
    after_stats: RebalanceStats


@dataclass(frozen=True)
class MigrationOverview:
    counts: dict[str, int]
    offsets_only: int  # classic groups that only hold committed offsets (no protocol: nothing to move)
    listing_problem: str
    classic_groups: list[GroupToMove]
    mixed_groups: list[GroupToMove]  # consumer groups with members still on the classic protocol
    not_described: str
    describe_error: str
    policy: str | None
    policy_error: str
    software: ClusterSoftware
    moves: list[Move]

    @property
    def verdicts(self) -> dict[str, int]:
        return dict(Counter(g.verdict.level for g in self.classic_groups))


def migration_policy(cluster: str) -> tuple[str | None, str]:
    """The brokers' group.consumer.migration.policy (DescribeConfigs of each broker), or None and why not."""
    admin = cluster_admin(cluster)
    try:
        brokers = sorted(b.id for b in admin.describe_cluster().brokers)[:POLICY_BROKERS_AT_MOST]
        configs = admin.describe_configs("broker", [str(b) for b in brokers])
    except KafkaGatewayError as exc:
        return None, exc.message
    values = {broker: (entries.get(POLICY_CONFIG).value if entries.get(POLICY_CONFIG) else None)
              for broker, entries in configs.items()}
    distinct = set(values.values())
    if len(distinct) != 1 or None in distinct:
        shown = ", ".join(f"broker {b}: {v or 'not reported'}" for b, v in sorted(values.items()))
        return None, MSG_POLICY_DIFFERS.format(values=shown)
    value = distinct.pop().lower()
    return (value, "") if value in POLICIES else (None, f"unknown value '{value}'")


def _stats(times: list[tuple[datetime, datetime | None]], start: datetime, end: datetime) -> RebalanceStats:
    """`times`: when each generation or epoch was written, and when it settled (None: not seen settling)."""
    inside = sorted(t for t in times if start <= t[0] < end)
    gaps = [(b[0] - a[0]).total_seconds() for a, b in zip(inside, inside[1:])]
    took = [(settled - at).total_seconds() for at, settled in inside if settled is not None]
    return RebalanceStats(len(inside), (end - start).total_seconds(), sum(gaps) / len(gaps) if gaps else None,
                          len(took), sum(took) / len(took) if took else None, max(took, default=None))


def group_moves(cluster: str, *, now: datetime | None = None, limit: int = 100) -> list[Move]:
    """Moves from the classic to the consumer protocol the sweeps saw, newest first, each with the rebalances the
    recorder stored on either side of it: HISTORY_WINDOW before it, and from it until now (at most HISTORY_WINDOW).
    The spans differ while the move is recent, so the page gives each span with its count."""
    now = now or datetime.now(UTC)
    changes = list(GroupTypeChange.objects.filter(cluster=cluster, before="classic", after="consumer")[:limit])
    generations: dict[str, list[tuple[str, datetime, datetime | None]]] = {}
    for group, protocol, at, settled in (
            GroupGeneration.objects.filter(cluster=cluster, group__in={c.group for c in changes})
            .values_list("group", "protocol", "time", "settled_at")):
        generations.setdefault(group, []).append((protocol, at, settled))
    moves = []
    for change in changes:
        classic = [(t, None) for p, t, _ in generations.get(change.group, ()) if p == "classic"]
        consumer = [(t, settled) for p, t, settled in generations.get(change.group, ()) if p == "consumer"]
        last_classic = max((t for t, _ in classic if t <= change.at), default=None)
        recorded = min((t for t, _ in consumer if last_classic is None or t >= last_classic), default=None)
        pivot = recorded or change.at
        after = min(HISTORY_WINDOW, max(now - pivot, timedelta(seconds=1)))
        moves.append(Move(change.group, change.before, change.after, change.at, change.previous_sweep_at, recorded,
                          _stats(classic, pivot - HISTORY_WINDOW, pivot), _stats(consumer, pivot, pivot + after)))
    return moves


def migration_overview(cluster: str) -> MigrationOverview:
    listings, problem = groups_of_every_type(cluster)
    counts = {kind: 0 for kind in TYPES}
    for g in listings:
        counts[g.group_type or g.protocol] = counts.get(g.group_type or g.protocol, 0) + 1
    offsets_only = sum(1 for g in listings if g.group_type == "classic" and g.simple)
    # Classic groups first: they are what the page is for; consumer groups only to find classic members in them.
    wanted = [g.group_id for g in listings if g.group_type == "classic" and not g.simple]
    wanted += [g.group_id for g in listings if g.group_type == "consumer"]
    total, wanted = len(wanted), wanted[:DESCRIBE_AT_MOST]
    described, describe_error = {}, ""
    try:
        described = cluster_admin(cluster).describe_group_protocols(wanted)
    except KafkaGatewayError as exc:
        describe_error = exc.message
    policy, policy_error = migration_policy(cluster)
    software = cluster_client_software(cluster)
    pairs = software.pairs
    classic, mixed = [], []
    for group_id in wanted:
        d = described.get(group_id)
        if d is None or d.state == "Dead":
            continue
        judged = GroupToMove(d, verdict(d, policy=policy, policy_error=policy_error, clients=pairs,
                                        clients_note=software.note))
        if d.group_type == "classic":
            classic.append(judged)
        elif d.classic_members:
            mixed.append(judged)
    left = total - len(wanted)
    return MigrationOverview(
        counts=counts, offsets_only=offsets_only, listing_problem=problem, classic_groups=classic,
        mixed_groups=mixed, describe_error=describe_error,
        not_described=MSG_NOT_DESCRIBED.format(left=left, total=total, limit=DESCRIBE_AT_MOST) if left else "",
        policy=policy, policy_error=policy_error, software=software, moves=group_moves(cluster))
