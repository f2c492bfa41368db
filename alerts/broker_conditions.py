"""When a broker-health rule holds (pure logic, like alerts/conditions.py): the figures the broker sampler stored
per broker in, the clusters and brokers that match out. Only brokers whose JMX gave fresh figures count, so a broker
that is down is seen through what the others report (their under-replicated partitions), never as zeros.

- under_replicated, under_min_isr  the cluster's brokers together report more such partitions than the threshold
- offline          the active controller reports offline partitions
- no_controller    every broker answered and none is the active controller
- idle             a broker's request handlers or network processors are idle less than threshold %
- p99_latency      a broker's p99 total time of Produce or consumer Fetch is above threshold ms
- retention        a partition of a topic matching the rule's pattern is at threshold % (90 by default) or more of
                   its retention.bytes on one of its replicas (KIP-1257's gauge, read over JMX); one alert per
                   partition, named as Kafka names it (topic-partition)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase

UNDER_REPLICATED, UNDER_MIN_ISR, OFFLINE, NO_CONTROLLER, IDLE, P99_LATENCY, RETENTION = (
    "under_replicated", "under_min_isr", "offline", "no_controller", "idle", "p99_latency", "retention")
BROKER_KINDS = (UNDER_REPLICATED, UNDER_MIN_ISR, OFFLINE, NO_CONTROLLER, IDLE, P99_LATENCY, RETENTION)
PER_BROKER_KINDS = (IDLE, P99_LATENCY)
THRESHOLD_KINDS = (IDLE, P99_LATENCY)
DEFAULT_RETENTION_PERCENT = 90


@dataclass(frozen=True)
class BrokerFacts:
    cluster: str
    broker: int
    values: dict  # the newest figures (selectors.FIGURES keys); {} when the broker gave none lately
    answered: bool
    # {topic: {"partition": percent}}: its partitions above 0 % of their retention.bytes (only read for that kind)
    retention_shares: dict = field(default_factory=dict)


def broker_subject(broker: int) -> str:
    """The alert's `group` for a per-broker alert (cluster-wide ones have none)."""
    return f"broker {broker}"


def _number(values: dict, key: str) -> float | None:
    value = values.get(key)
    return float(value) if isinstance(value, int | float) else None


def broker_firing(rule, brokers: tuple[BrokerFacts, ...], clusters: list[str]) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for cluster in clusters:
        facts = [b for b in brokers if b.cluster == cluster]
        live = [b for b in facts if b.answered]
        if rule.kind == RETENTION:
            found.update(_retention_firing(rule, cluster, live))
            continue
        if rule.kind in PER_BROKER_KINDS:
            for b in live:
                if why := _broker_condition(rule, b):
                    found[(cluster, broker_subject(b.broker))] = why
            continue
        if not live:
            continue
        silent = [b.broker for b in facts if not b.answered]
        unheard = f" (broker{'s' if len(silent) > 1 else ''} {', '.join(map(str, silent))} gave no figures)" if silent else ""
        limit = rule.threshold or 0
        if rule.kind in (UNDER_REPLICATED, UNDER_MIN_ISR):
            key = "under_replicated" if rule.kind == UNDER_REPLICATED else "under_min_isr"
            total = sum(_number(b.values, key) or 0 for b in live)
            if total > limit:
                what = "under-replicated" if rule.kind == UNDER_REPLICATED else "under their min ISR"
                found[(cluster, "")] = f"{total:.0f} partitions are {what} in cluster {cluster}{unheard}"
        elif rule.kind == OFFLINE:
            offline = max((_number(b.values, "offline_partitions") or 0 for b in live), default=0)
            if offline > limit:
                found[(cluster, "")] = f"{offline:.0f} partitions of cluster {cluster} are offline (no leader)"
        elif rule.kind == NO_CONTROLLER and not silent:
            if sum(_number(b.values, "active_controllers") or 0 for b in live) == 0:
                found[(cluster, "")] = f"no broker of cluster {cluster} is the active controller"
    return found


def _broker_condition(rule, b: BrokerFacts) -> str:
    where = f"broker {b.broker} of cluster {b.cluster}"
    if rule.kind == IDLE:
        low = [(label, v) for label, key in (("request handlers", "request_idle_pct"),
                                              ("network processors", "network_idle_pct"))
               if (v := _number(b.values, key)) is not None and v < (rule.threshold or 0)]
        return "; ".join(f"{where}: {label} idle {v:.1f} % (rule: below {rule.threshold} %)" for label, v in low)
    slow = [(label, v) for label, key in (("Produce", "produce_p99_ms"), ("consumer Fetch", "fetch_p99_ms"))
            if (v := _number(b.values, key)) is not None and v > (rule.threshold or 0)]
    return "; ".join(f"{where}: {label} p99 {v:,.0f} ms (rule: above {rule.threshold} ms)" for label, v in slow)


def partition_subject(topic: str, partition: int) -> str:
    """The alert's `group` for a retention alert: the partition as Kafka names it."""
    return f"{topic}-{partition}"


def _retention_firing(rule, cluster: str, live: list[BrokerFacts]) -> dict[tuple[str, str], str]:
    """Each partition of a matching topic with a replica at the threshold or above, named with its fullest one."""
    limit = rule.threshold if rule.threshold is not None else DEFAULT_RETENTION_PERCENT
    over: dict[tuple[str, int], list[tuple[int, int]]] = {}  # (topic, partition) -> [(percent, broker)]
    for b in live:
        for topic, shares in b.retention_shares.items():
            if fnmatchcase(topic, rule.group_pattern or "*"):
                for partition, share in shares.items():
                    if share >= limit:
                        over.setdefault((topic, int(partition)), []).append((int(share), b.broker))
    found = {}
    for (topic, partition), replicas in sorted(over.items()):
        share, broker = max(replicas, key=lambda r: (r[0], -r[1]))
        found[(cluster, partition_subject(topic, partition))] = (
            f"partition {topic}-{partition} of cluster {cluster} is at {share} % of its retention.bytes on broker "
            f"{broker} (rule: {limit} % or more)")
    return found
