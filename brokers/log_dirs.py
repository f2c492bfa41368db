"""A broker's log directories and their cordoning (KIP-1066, Kafka 4.3): what each directory holds and whether it
is cordoned (DescribeLogDirs), the broker's `cordoned.log.dirs` config behind it, and the plan of a change to it.

A cordoned directory keeps its replicas and goes on serving them; the controller places no new replica there (new
topics, added partitions, reassignments). `cordoned.log.dirs` is a per-broker dynamic config: entries of the
broker's log.dirs separated by commas, or `*` for every directory. With every directory of every broker cordoned,
creating topics and partitions fails. The broker checks the entries itself, and its refusal (an entry not in
log.dirs, `*` with other entries) is what the person is shown.

The plan is pure (plan_cordon); the reads ask Kafka (DescribeLogDirs and DescribeConfigs of the one broker)."""

from __future__ import annotations

from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError, NotFound
from gateway.kafka.types import BROKER, LogDirState

CONFIG = "cordoned.log.dirs"
ALL = "*"
MSG_NO_BROKER = "Cluster '{cluster}' has no broker {broker} up (its brokers: {known})."
MSG_NO_DIRS_REPORTED = "Broker {broker} of cluster '{cluster}' reported no log directory."
MSG_NO_DIRS = "Name one or more of the broker's log directories (or * for all of them)."
MSG_NOTHING_TO_CORDON = "Nothing to cordon: {dirs} already cordoned on broker {broker}."
MSG_NOTHING_TO_UNCORDON = "Nothing to uncordon: {dirs} not cordoned on broker {broker} (cordoned: {now})."
MSG_NOT_CHANGEABLE = ("Broker {broker} has no dynamic cordoned.log.dirs config: cordoning log directories needs Kafka "
                      "4.3 or later.")


@dataclass(frozen=True)
class BrokerLogDirs:
    """One broker's log directories now, and its cordoned.log.dirs config: its value, source, and the value it would
    have without a dynamic override (the broker's static setting or Kafka's default). `changeable` is False where
    the broker has no such dynamic config (a Kafka before 4.3)."""

    broker: int
    dirs: tuple[LogDirState, ...]
    config: str
    source: str
    inherited: str
    changeable: bool = True

    @property
    def paths(self) -> list[str]:
        return [d.path for d in self.dirs]

    @property
    def cordoned(self) -> list[str]:
        return [d.path for d in self.dirs if d.cordoned]


def entries(value: str) -> list[str]:
    """The entries of a cordoned.log.dirs value, as the broker splits it (commas, surrounding spaces dropped)."""
    return [e.strip() for e in (value or "").split(",") if e.strip()]


@dataclass(frozen=True)
class CordonPlan:
    """What a cordon or uncordon of some directories of one broker does: the config before and after, and the
    directories whose state changes, with the replicas they hold."""

    broker: int
    cordon: bool
    before: str
    after: str
    remove_override: bool  # `after` is the value without a dynamic override: the override is removed, not set
    affected: tuple[LogDirState, ...]
    all_cordoned_after: bool  # the broker then takes no new replica at all

    @property
    def replicas(self) -> int:
        return sum(d.replicas for d in self.affected)

    @property
    def what(self) -> str:
        return "cordon" if self.cordon else "uncordon"

    def as_dict(self) -> dict:
        return {"broker": self.broker, "action": self.what, "config": CONFIG, "before": self.before,
                "after": self.after, "remove_override": self.remove_override,
                "directories": [{"path": d.path, "replicas": d.replicas, "size": d.size} for d in self.affected],
                "replicas": self.replicas, "all_cordoned_after": self.all_cordoned_after}


def plan_cordon(state: BrokerLogDirs, wanted: list[str], *, cordon: bool) -> CordonPlan:
    """The plan of cordoning (or uncordoning) `wanted` (paths, or ALL alone) on the broker as `state` shows it.
    Entries the broker does not know go into the new value as given, so that the broker's own check refuses them
    in its words; nothing to change is a ConsoleError at the field."""
    if not state.changeable:
        raise ConsoleError(MSG_NOT_CHANGEABLE.format(broker=state.broker), field="log_dirs")
    wanted = list(dict.fromkeys(w.strip() for w in wanted if w.strip()))
    if not wanted:
        raise ConsoleError(MSG_NO_DIRS, field="log_dirs")
    now = entries(state.config)
    if cordon:
        added = [w for w in wanted if w not in now]
        if ALL in now or not added:
            raise ConsoleError(MSG_NOTHING_TO_CORDON.format(dirs=", ".join(wanted), broker=state.broker),
                               field="log_dirs")
        after = ALL if wanted == [ALL] else ",".join([*now, *added])
        cordoned_after = set(state.paths) if after == ALL else set(entries(after))
    else:
        current = state.paths if ALL in now else now
        left = [] if ALL in wanted else [c for c in current if c not in wanted]
        if left == current:
            raise ConsoleError(MSG_NOTHING_TO_UNCORDON.format(dirs=", ".join(wanted), broker=state.broker,
                                                              now=", ".join(current) or "none"), field="log_dirs")
        after = ",".join(left)
        cordoned_after = set(left)
    affected = tuple(d for d in state.dirs if (d.path in cordoned_after) != d.cordoned)
    return CordonPlan(broker=state.broker, cordon=cordon, before=state.config, after=after,
                      remove_override=entries(after) == entries(state.inherited), affected=affected,
                      all_cordoned_after=bool(state.paths) and set(state.paths) <= cordoned_after)


def broker_log_dirs(cluster: str, broker_id: int) -> BrokerLogDirs:
    """The broker's directories (DescribeLogDirs) and its cordoned.log.dirs (DescribeConfigs), asked now."""
    admin = cluster_admin(cluster)
    known = sorted(b.id for b in admin.describe_cluster().brokers)
    if broker_id not in known:  # asked anyway, the Java client would wait its whole bound for it
        raise NotFound(MSG_NO_BROKER.format(broker=broker_id, cluster=cluster, known=", ".join(map(str, known))))
    dirs = tuple(d for d in admin.describe_log_dir_states([broker_id]) if d.broker == broker_id)
    if not dirs:
        raise ConsoleError(MSG_NO_DIRS_REPORTED.format(broker=broker_id, cluster=cluster))
    entry = admin.describe_configs(BROKER, [str(broker_id)])[str(broker_id)].get(CONFIG)
    if entry is None:
        return BrokerLogDirs(broker=broker_id, dirs=dirs, config="", source="", inherited="", changeable=False)
    inherited = entry.inherited_value if entry.is_override else entry.value
    return BrokerLogDirs(broker=broker_id, dirs=dirs, config=entry.value or "", source=entry.source,
                         inherited=inherited or "", changeable=not entry.read_only)
