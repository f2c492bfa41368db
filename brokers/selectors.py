"""Reads of what the broker sampler stored: the health tiles of a cluster, and stored history for the shell. Nothing
here asks Kafka or JMX, so pages answer at once whatever the brokers do."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models.fields.json import KeyTransform

from brokers import conf
from brokers.models import BrokerSample, BrokerState, MetricsSource, SamplerRun

# (key, label, unit) of what a broker reports, in the order tiles and the shell show them
FIGURES = (
    ("bytes_in", "bytes in", "B/s"), ("bytes_out", "bytes out", "B/s"), ("messages_in", "messages in", "/s"),
    ("produce_requests", "produce requests", "/s"), ("fetch_requests", "consumer fetch requests", "/s"),
    ("produce_p99_ms", "produce p99", "ms"), ("fetch_p99_ms", "consumer fetch p99", "ms"),
    ("request_idle_pct", "request handlers idle", "%"), ("network_idle_pct", "network processors idle", "%"),
    ("under_replicated", "under-replicated partitions", ""), ("under_min_isr", "under min ISR partitions", ""),
    ("offline_partitions", "offline partitions", ""), ("active_controllers", "active controller", ""),
    ("isr_shrinks", "ISR shrinks", "/s"), ("isr_expands", "ISR expands", "/s"),
)
LABELS = {key: label for key, label, _ in FIGURES}
UNITS = {key: unit for key, _, unit in FIGURES}
TOPIC_FIGURES = ("bytes_in", "bytes_out", "messages_in")
BAD_WHEN_ABOVE_ZERO = ("under_replicated", "under_min_isr", "offline_partitions")


@dataclass(frozen=True)
class BrokerTile:
    broker: int
    address: str
    values: dict
    last_ok_at: datetime | None
    error: str  # why the newest reading gave nothing; "" when it gave figures
    error_kind: str
    read_ms: int
    stale: bool  # no figures for three intervals

    @property
    def shown(self) -> list[tuple[str, float | None, str, bool]]:
        """(label, value, unit, alarming) for each figure, in FIGURES' order."""
        return [(label, self.values.get(key), unit, key in BAD_WHEN_ABOVE_ZERO and (self.values.get(key) or 0) > 0)
                for key, label, unit in FIGURES]

    @property
    def bad(self) -> list[str]:
        return [LABELS[k] for k in BAD_WHEN_ABOVE_ZERO if (self.values.get(k) or 0) > 0]


@dataclass(frozen=True)
class ClusterHealth:
    cluster: str
    source: MetricsSource | None
    tiles: tuple[BrokerTile, ...]
    run: SamplerRun | None
    interval_s: float
    totals: dict = field(default_factory=dict)

    @property
    def stale(self) -> bool:
        """No sweep for three intervals: beat or the worker is not running."""
        last = self.run.last_run_at if self.run else None
        return last is None or (datetime.now(UTC) - last).total_seconds() > 3 * self.interval_s

    @property
    def controller_known(self) -> bool:
        return bool(self.tiles) and all(not t.error and not t.stale for t in self.tiles)


def _fresh(at: datetime | None, interval_s: float, now: datetime) -> bool:
    return at is not None and (now - at).total_seconds() <= 3 * interval_s


def broker_tiles(cluster: str, *, now: datetime | None = None) -> list[BrokerTile]:
    now, interval = now or datetime.now(UTC), conf.sample_interval_s()
    tiles = []
    for s in BrokerState.objects.filter(cluster=cluster).order_by("broker"):
        failing = s.last_error_at is not None and (s.last_ok_at is None or s.last_error_at > s.last_ok_at)
        tiles.append(BrokerTile(broker=s.broker, address=s.address, values=s.latest if not failing else {},
                                last_ok_at=s.last_ok_at, error=s.last_error if failing else "",
                                error_kind=s.error_kind if failing else "", read_ms=s.read_ms,
                                stale=not _fresh(s.last_ok_at, interval, now)))
    return tiles


def cluster_totals(tiles: list[BrokerTile]) -> dict:
    """Cluster-wide figures from the brokers that answered: sums, but offline partitions and the active controller
    are the controllers' to report (each partition counted once, by the active controller)."""
    live = [t for t in tiles if not t.error and not t.stale]
    totals = {k: sum(t.values.get(k) or 0 for t in live)
              for k in ("bytes_in", "bytes_out", "messages_in", "under_replicated", "under_min_isr",
                        "active_controllers", "produce_requests", "fetch_requests")}
    totals["offline_partitions"] = max((t.values.get("offline_partitions") or 0 for t in live), default=0)
    totals["answering"], totals["brokers"] = len(live), len(tiles)
    return totals


def cluster_health(cluster: str) -> ClusterHealth:
    tiles = broker_tiles(cluster)
    return ClusterHealth(cluster=cluster, source=MetricsSource.objects.filter(cluster=cluster).first(),
                         tiles=tuple(tiles), run=SamplerRun.objects.filter(cluster=cluster).first(),
                         interval_s=conf.sample_interval_s(), totals=cluster_totals(tiles))


def metrics_history(cluster: str, *, broker: int | None, since: datetime, until: datetime,
                    topic: str = "") -> list[dict]:
    """Stored samples oldest first: raw ones where they are kept, minute averages before that."""
    raw_from = datetime.fromtimestamp(datetime.now(UTC).timestamp() - conf.raw_retention_s(), UTC)
    rows = BrokerSample.objects.filter(cluster=cluster, topic=topic, at__gte=since, at__lte=until)
    if broker is not None:
        rows = rows.filter(broker=broker)
    minute = rows.filter(step=BrokerSample.MINUTE, at__lt=max(since, raw_from))
    raw = rows.filter(step=BrokerSample.RAW, at__gte=raw_from)
    found = []
    for step, query in ((BrokerSample.MINUTE, minute), (BrokerSample.RAW, raw)):
        for at, b, values in query.order_by("at", "broker").values_list("at", "broker", "values").iterator(2000):
            found.append({"time": at.isoformat().replace("+00:00", "Z"), "broker": b, "step_s": step,
                          **({"topic": topic} if topic else {}), **values})
    return sorted(found, key=lambda r: (r["time"], r["broker"]))


MSG_NO_SOURCE = ("Cluster '{cluster}' has no metrics source: set one with `manage.py brokers source --cluster {cluster} "
                 "--jmx +10000 --actor NAME`.")


def brokers_read_now(cluster: str, *, broker: int | None = None) -> list:
    """Every broker's JMX read now (the shell's dump), bounded as a sample is; BrokerJmxReading values."""
    from brokers.sampler import _known_brokers, brokers_ask
    from console.clusters.selectors import cluster_get
    from console.errors import ConsoleError

    registration = cluster_get(cluster)
    source = MetricsSource.objects.filter(cluster=cluster).first()
    if source is None:
        raise ConsoleError(MSG_NO_SOURCE.format(cluster=cluster))
    asked = brokers_ask(registration, source, _known_brokers(cluster))
    if asked.error and not asked.readings:
        raise ConsoleError(f"Cluster '{cluster}': {asked.error}.")
    return [r for r in asked.readings if broker is None or r.broker == broker]


def topic_throughput(cluster: str) -> dict[str, dict[str, float]]:
    """topic -> {"bytes_in", "bytes_out", "messages_in"} per second at the newest sample, summed over the brokers
    (for the topic list's columns and its sorting); {} before the first sample."""
    newest = (BrokerSample.objects.filter(cluster=cluster, step=BrokerSample.RAW, topic="")
              .order_by("-at").values_list("at", flat=True).first())
    if newest is None:
        return {}
    found: dict[str, dict[str, float]] = {}
    for topic, values in (BrokerSample.objects.filter(cluster=cluster, step=BrokerSample.RAW, at=newest)
                          .exclude(topic="").values_list("topic", "values").iterator(5000)):
        sums = found.setdefault(topic, {})
        for key in TOPIC_FIGURES:
            if isinstance(values.get(key), int | float):
                sums[key] = sums.get(key, 0.0) + values[key]
    return found


@dataclass(frozen=True)
class RetentionShares:
    """One topic's partitions as shares of retention.bytes, as the sampler last read them from the brokers' JMX
    (KIP-1257's gauge): whole percent per partition and broker, for the partitions above 0."""

    by_partition: dict[int, dict[int, int]]  # partition -> broker -> percent
    answering: frozenset[int]  # brokers whose newest reading is fresh: a replica there and not listed is at 0 %
    read_at: datetime | None  # the oldest of those readings

    def of(self, partition: int, replicas: tuple[int, ...]) -> dict[int, int]:
        """broker -> percent for each replica whose broker answered."""
        found = self.by_partition.get(partition, {})
        return {broker: found.get(broker, 0) for broker in replicas if broker in self.answering}


def topic_retention_shares(cluster: str, topic: str, *, now: datetime | None = None) -> RetentionShares | None:
    """What the sampler last stored of the topic's shares; None when the cluster's brokers are not read over JMX
    (no metrics source, a Prometheus one, or sampling off), which is the only way the console reads them."""
    source = MetricsSource.objects.filter(cluster=cluster).first()
    if source is None or source.kind != MetricsSource.JMX or not source.enabled:
        return None
    now, interval = now or datetime.now(UTC), conf.sample_interval_s()
    by_partition: dict[int, dict[int, int]] = {}
    answering, times = set(), []
    rows = (BrokerState.objects.filter(cluster=cluster).annotate(shares=KeyTransform(topic, "retention_shares"))
            .values_list("broker", "last_ok_at", "last_error_at", "shares"))  # only this topic's, of each broker
    for broker, last_ok_at, last_error_at, shares in rows:
        failing = last_error_at is not None and (last_ok_at is None or last_error_at > last_ok_at)
        if failing or not _fresh(last_ok_at, interval, now):
            continue
        answering.add(broker)
        times.append(last_ok_at)
        for partition, share in (shares or {}).items():
            by_partition.setdefault(int(partition), {})[broker] = int(share)
    return RetentionShares(by_partition=by_partition, answering=frozenset(answering), read_at=min(times, default=None))
