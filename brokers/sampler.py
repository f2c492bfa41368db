"""Broker metrics sampling: every cluster with a metrics source is read at once (a thread each, so a cluster whose
JMX hangs delays no other), each broker's reading becomes a row of rates and gauges (and a row per topic), and the
raw rows are averaged into minutes and pruned after every sweep, so storage stays bounded.

These are observations of the cluster and change nothing in Kafka, so they write no audit events."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import transaction

from brokers import conf
from brokers.endpoints import endpoints
from brokers.models import BrokerSample, BrokerState, MetricsSource, SamplerRun
from brokers.series import minute_averages, reading_values
from console.clusters.models import Cluster
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.prometheus import read_prometheus
from gateway.kafka.types import JMX_FAILED, BrokerJmxReading

log = logging.getLogger(__name__)
MAX_CLUSTERS_AT_ONCE = 8
MSG_LATE = ("started {late:.0f} s after the sample before (every {interval:g} s): samples were missed; is the worker "
            "busy or was it stopped?")
MSG_SLOW = "the last sample took {took:.1f} s, longer than the interval of {interval:g} s"


@dataclass(frozen=True)
class Asked:
    readings: list[BrokerJmxReading]
    error: str = ""
    kafka_ports: dict[int, int] | None = None  # as Kafka listed its brokers, for when it stops answering


def brokers_ask(cluster: Cluster, source: MetricsSource, known: list[tuple[int, str, int]]) -> Asked:
    """Runs in a thread of its own: the brokers Kafka lists (only when the addresses follow from them), then every
    broker's JMX at once, or Prometheus about all of them. Nothing here touches the database."""
    admin = cluster_admin(cluster)
    brokers = known
    if not source.jmx.strip()[:1].isdigit() or "{id}" in source.jmx:  # all but a list: the brokers Kafka lists
        try:
            brokers = [(b.id, b.host, b.port) for b in admin.describe_cluster().brokers]
        except KafkaGatewayError as exc:
            if not known:
                return Asked([], f"Kafka did not list its brokers ({exc.message}), and none are known yet")
    ports = {broker: port for broker, _, port in brokers}
    try:
        targets, refused = endpoints(source, cluster, brokers)
        not_asked = [BrokerJmxReading(broker=broker, address=host, read_at=time.time(), duration_s=0.0,
                                      error=refused[broker], error_kind=JMX_FAILED)
                     for broker, host, _ in brokers if broker in refused]
        if not targets:
            what = "an exporter" if source.kind == MetricsSource.PROMETHEUS else "a JMX"
            return Asked(not_asked, f"no broker has {what} address", ports)
        if source.kind == MetricsSource.PROMETHEUS:
            first = targets[0]
            return Asked(read_prometheus(source.prometheus_url, targets, timeout=conf.read_timeout_s(),
                                         username=first.username, password=first.password), "", ports)
        return Asked(admin.read_jmx(targets, timeout=conf.read_timeout_s()) + not_asked, "", ports)
    except (ConsoleError, KafkaGatewayError) as exc:
        return Asked([], exc.message, ports)


def _known_brokers(cluster: str) -> list[tuple[int, str, int]]:
    """Brokers seen before, for a cluster that does not answer: their tiles then say so instead of vanishing."""
    found = []
    for broker, address, counts in BrokerState.objects.filter(cluster=cluster).values_list("broker", "address",
                                                                                              "counts"):
        host = address.rpartition(":")[0]
        if counts.get("kafka_port"):
            found.append((broker, host, int(counts["kafka_port"])))
    return found


def broker_metrics_sample_all(*, now: datetime | None = None) -> dict[str, str]:
    """One sweep of every enabled source; cluster -> "ok" or why not."""
    now = now or datetime.now(UTC)
    clusters = {c.name: c for c in Cluster.objects.all()}
    sources = [s for s in MetricsSource.objects.filter(enabled=True).order_by("cluster") if s.cluster in clusters]
    if not sources:
        return {}
    began = time.monotonic()
    with ThreadPoolExecutor(max_workers=min(MAX_CLUSTERS_AT_ONCE, len(sources)),
                            thread_name_prefix="broker-metrics") as pool:
        asked = {s.cluster: pool.submit(brokers_ask, clusters[s.cluster], s, _known_brokers(s.cluster)) for s in sources}
        outcome = {}
        for cluster, future in asked.items():
            try:
                result = future.result()
            except Exception as exc:  # noqa: BLE001 - one cluster's surprise must not cost the others their sample
                log.exception("Broker metrics of %s were not sampled", cluster)
                result = Asked([], f"{type(exc).__name__}: {exc}")
            outcome[cluster] = broker_metrics_store(cluster=cluster, asked=result, now=now,
                                                    took_s=time.monotonic() - began)
    return outcome


def broker_metrics_store(*, cluster: str, asked: Asked, now: datetime, took_s: float) -> str:
    """Stores one cluster's readings, then averages finished minutes and prunes what is past its retention."""
    interval = conf.sample_interval_s()
    run, _ = SamplerRun.objects.get_or_create(cluster=cluster)
    behind = ""
    if run.last_run_at and (now - run.last_run_at).total_seconds() > 1.5 * interval:
        behind = MSG_LATE.format(late=(now - run.last_run_at).total_seconds(), interval=interval)
    if took_s > interval:
        behind = MSG_SLOW.format(took=took_s, interval=interval)
    states = {s.broker: s for s in BrokerState.objects.filter(cluster=cluster)}
    rows = []
    with transaction.atomic():
        for reading in asked.readings:
            state = states.get(reading.broker) or BrokerState(cluster=cluster, broker=reading.broker)
            state.address, state.read_ms = reading.address, int(reading.duration_s * 1000)
            if reading.ok:
                values, topics, kept = reading_values(reading, state.counts or {})
                kept["kafka_port"] = (asked.kafka_ports or {}).get(reading.broker) or (state.counts or {}).get(
                    "kafka_port")
                rows.append(BrokerSample(cluster=cluster, broker=reading.broker, at=now, values=values))
                rows += [BrokerSample(cluster=cluster, broker=reading.broker, topic=topic, at=now, values=v)
                         for topic, v in topics.items()]
                state.latest, state.counts, state.last_ok_at = values, kept, now
                state.retention_shares = {topic: {str(p): share for p, share in sorted(shares.items())}
                                          for topic, shares in sorted(reading.retention_shares.items())}
            else:
                state.last_error, state.error_kind, state.last_error_at = reading.error, reading.error_kind, now
            state.save()
        BrokerSample.objects.bulk_create(rows, batch_size=1000)
        good = sum(1 for r in asked.readings if r.ok)
        run.last_run_at, run.duration_ms, run.behind = now, int(took_s * 1000), behind
        if asked.error:
            run.last_error = asked.error
        elif good < len(asked.readings):
            run.last_error = f"{len(asked.readings) - good} of {len(asked.readings)} brokers gave no figures"
        else:
            run.last_error = ""
        if good:
            run.last_ok_at = now
        _roll_up(run, now)
        run.save()
    return "ok" if not run.last_error else run.last_error


def _roll_up(run: SamplerRun, now: datetime) -> None:
    """Averages every finished minute since the last roll-up, then drops rows older than their retention."""
    minute_end = int(now.timestamp() // 60) * 60
    start = max(run.rolled_until, now.timestamp() - conf.raw_retention_s())
    if minute_end > start:
        since, until = datetime.fromtimestamp(start, UTC), datetime.fromtimestamp(minute_end, UTC)
        raw = BrokerSample.objects.filter(cluster=run.cluster, step=BrokerSample.RAW, at__gte=since, at__lt=until)
        averaged = minute_averages(((broker, topic), at.timestamp(), values) for broker, topic, at, values
                                   in raw.values_list("broker", "topic", "at", "values").iterator(5000))
        BrokerSample.objects.filter(cluster=run.cluster, step=BrokerSample.MINUTE, at__gte=since,
                                    at__lt=until).delete()
        BrokerSample.objects.bulk_create(
            [BrokerSample(cluster=run.cluster, broker=broker, topic=topic, step=BrokerSample.MINUTE,
                          at=datetime.fromtimestamp(minute, UTC), values=values)
             for ((broker, topic), minute), values in averaged.items()], batch_size=1000)
        run.rolled_until = float(minute_end)
    BrokerSample.objects.filter(cluster=run.cluster, step=BrokerSample.RAW,
                                at__lt=now - timedelta(seconds=conf.raw_retention_s())).delete()
    BrokerSample.objects.filter(cluster=run.cluster, step=BrokerSample.MINUTE,
                                at__lt=now - timedelta(seconds=conf.minute_retention_s())).delete()
