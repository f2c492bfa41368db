"""When a rule holds (pure logic: facts the sampler and recorder stored in, the groups and clusters that match out).

Each rule kind reads one kind of fact:
- status      the group's Burrow-style status is one of the rule's (WARN, ERR, STOP, BLOCKED);
- lag         the group's total lag at the newest sample is above the threshold;
- rebalances  the recorder saw at least `threshold` generations of the group within `window_minutes`;
- sampler     the cluster had no successful lag sweep for `for_minutes` (at least three sample intervals);
- recorder    the cluster's recorder stopped, or its history is older than `for_minutes` (at least 3 minutes);
- classic_protocol  the last lag sweep listed the group as a classic-protocol group with a rebalance protocol
              (not one that only holds committed offsets): it has not moved to the consumer protocol (KIP-848) yet;
- connector   a connector matching the pattern, or one of its tasks, is FAILED (statuses ["FAILED"]) or anything but
              RUNNING (["NOT_RUNNING"]) in what beat last observed; one alert per connector, whatever its tasks do.
How long a status, lag or connector condition must hold before anyone is told is not decided here but by the alert's
`since` (see alerts/evaluation.py): the sampler and recorder kinds measure their own staleness instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from fnmatch import fnmatchcase

from alerts.broker_conditions import BROKER_KINDS, BrokerFacts, broker_firing

STATUS, LAG, REBALANCES, SAMPLER, RECORDER, CONNECTOR, CLASSIC_PROTOCOL = (
    "status", "lag", "rebalances", "sampler", "recorder", "connector", "classic_protocol")
CONNECTOR_STATUSES = ("FAILED", "NOT_RUNNING")
TRACE_LINES = 12  # of a failed task's trace, in the alert's message
GROUP_KINDS = (STATUS, LAG, REBALANCES, CLASSIC_PROTOCOL)
ALERTABLE_STATUSES = ("WARN", "BLOCKED", "STOP", "ERR")
MIN_RECORDER_STALE_S = 180


@dataclass(frozen=True)
class GroupFacts:
    cluster: str
    group: str
    status: str  # "" while the sampler still collects samples
    reason: str
    lag: int | None  # total lag at the newest sample of the status window


@dataclass(frozen=True)
class SweepFacts:
    last_ok_at: datetime | None
    last_error: str


@dataclass(frozen=True)
class RecorderFacts:
    state: str
    recorded_up_to: datetime | None
    detail: str


@dataclass(frozen=True)
class ConnectorFacts:
    cluster: str
    connect: str
    connector: str
    state: str
    worker_id: str
    trace: str
    tasks: tuple[dict, ...]  # {"id", "state", "worker_id", "trace"}


@dataclass(frozen=True)
class Facts:
    now: datetime
    clusters: tuple[str, ...]
    groups: tuple[GroupFacts, ...] = ()
    # (cluster, group) → times of the generations the recorder stored within the longest rebalance window
    generations: dict[tuple[str, str], list[datetime]] = field(default_factory=dict)
    sweeps: dict[str, SweepFacts] = field(default_factory=dict)
    recorders: dict[str, RecorderFacts] = field(default_factory=dict)
    connectors: tuple[ConnectorFacts, ...] = ()
    brokers: tuple[BrokerFacts, ...] = ()  # what the broker sampler last read (brokers/), for the broker kinds
    # (cluster, group) -> since when the sweeps have seen it as a classic group with a protocol
    classic_groups: dict[tuple[str, str], datetime] = field(default_factory=dict)
    sample_interval_s: float = 30.0


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def matches(pattern: str, name: str) -> bool:
    """Shell-style and case-sensitive, as Kafka names are; the empty name of a cluster-wide alert matches '*'."""
    return fnmatchcase(name, pattern or "*")


def hold_s(rule) -> float:
    """How long a condition must hold before the alert fires."""
    return rule.for_minutes * 60.0 if rule.kind in (STATUS, LAG, CONNECTOR, CLASSIC_PROTOCOL, *BROKER_KINDS) else 0.0


def firing(rule, facts: Facts) -> dict[tuple[str, str], str]:
    """(cluster, group) → why, for every group (or cluster, with group "") where `rule` holds now."""
    clusters = [c for c in facts.clusters if not rule.cluster or c == rule.cluster]
    if rule.kind in GROUP_KINDS:
        return _group_conditions(rule, facts, set(clusters))
    if rule.kind == SAMPLER:
        return {(c, ""): why for c in clusters if (why := _sampler_stalled(rule, facts, c))}
    if rule.kind == RECORDER:
        return {(c, ""): why for c in clusters if (why := _recorder_stalled(rule, facts, c))}
    if rule.kind == CONNECTOR:
        return _connector_conditions(rule, facts, set(clusters))
    if rule.kind in BROKER_KINDS:
        return broker_firing(rule, facts.brokers, clusters)
    raise ValueError(f"unknown rule kind {rule.kind!r}")


def _group_conditions(rule, facts: Facts, clusters: set[str]) -> dict[tuple[str, str], str]:
    found = {}
    if rule.kind == REBALANCES:
        since = facts.now.timestamp() - (rule.window_minutes or 0) * 60
        for (cluster, group), times in facts.generations.items():
            if cluster in clusters and matches(rule.group_pattern, group):
                count = sum(1 for t in times if t.timestamp() >= since)
                if count >= (rule.threshold or 1):
                    found[(cluster, group)] = (f"{count} rebalances in the last {rule.window_minutes} min "
                                               f"(rule: at least {rule.threshold})")
        return found
    if rule.kind == CLASSIC_PROTOCOL:
        for (cluster, group), since in facts.classic_groups.items():
            if cluster in clusters and matches(rule.group_pattern, group):
                found[(cluster, group)] = (f"still on the classic rebalance protocol (a classic group since "
                                           f"{since:%Y-%m-%d %H:%M:%S} UTC at least)")
        return found
    for g in facts.groups:
        if g.cluster not in clusters or not matches(rule.group_pattern, g.group):
            continue
        if rule.kind == STATUS and g.status in rule.statuses:
            found[(g.cluster, g.group)] = f"{g.status}: {g.reason}"
        elif rule.kind == LAG and g.lag is not None and g.lag > (rule.threshold or 0):
            found[(g.cluster, g.group)] = f"total lag {g.lag:,} is above {rule.threshold:,}"
    return found


def _sampler_stalled(rule, facts: Facts, cluster: str) -> str:
    limit = max(rule.for_minutes * 60.0, 3 * facts.sample_interval_s)
    sweep = facts.sweeps.get(cluster)
    if sweep is None or sweep.last_ok_at is None:
        why = f": {sweep.last_error}" if sweep and sweep.last_error else ""
        return f"the lag sampler has never sampled cluster {cluster}{why}"
    quiet = facts.now.timestamp() - sweep.last_ok_at.timestamp()
    if quiet <= limit:
        return ""
    why = f"; last error: {sweep.last_error}" if sweep.last_error else ""
    return f"no successful lag sweep of cluster {cluster} for {_minutes(quiet)}{why}"


def _recorder_stalled(rule, facts: Facts, cluster: str) -> str:
    limit = max(rule.for_minutes * 60.0, MIN_RECORDER_STALE_S)
    recorder = facts.recorders.get(cluster)
    if recorder is None:
        return f"no recorder has reported for cluster {cluster}"
    detail = f" ({recorder.detail})" if recorder.detail else ""
    if recorder.state == "stopped":
        return f"the recorder of cluster {cluster} stopped{detail}"
    if recorder.recorded_up_to is None:
        return f"the recorder of cluster {cluster} has recorded nothing yet ({recorder.state}){detail}"
    behind = facts.now.timestamp() - recorder.recorded_up_to.timestamp()
    if behind <= limit:
        return ""
    return f"rebalance history of cluster {cluster} is {_minutes(behind)} behind ({recorder.state}){detail}"


def _bad(state: str, statuses: list[str]) -> bool:
    return state != "RUNNING" if "NOT_RUNNING" in statuses else state == "FAILED"


def _trace(trace: str) -> str:
    lines = trace.strip().splitlines()
    return "\n".join(lines[:TRACE_LINES]) + ("\n\t..." if len(lines) > TRACE_LINES else "")


def _connector_conditions(rule, facts: Facts, clusters: set[str]) -> dict[tuple[str, str], str]:
    """(cluster, "CONNECT/CONNECTOR") -> what is wrong, with the first failed task's (or the connector's) trace."""
    statuses = rule.statuses or ["FAILED"]
    found = {}
    for c in facts.connectors:
        if c.cluster not in clusters or not matches(rule.group_pattern, c.connector):
            continue
        bad_tasks = [t for t in c.tasks if _bad(t["state"], statuses)]
        if not _bad(c.state, statuses) and not bad_tasks:
            continue
        parts = [f"connector {c.connector} (Connect {c.connect}) is {c.state}"]
        parts += [f"task {t['id']} is {t['state']}" + (f" on {t['worker_id']}" if t.get("worker_id") else "")
                  for t in bad_tasks]
        trace = next((t.get("trace") for t in bad_tasks if t.get("trace")), "") or c.trace
        found[(c.cluster, f"{c.connect}/{c.connector}")] = "; ".join(parts) + (f"\n{_trace(trace)}" if trace else "")
    return found
