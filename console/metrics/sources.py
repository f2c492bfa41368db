"""The families /metrics reports, contributed by the apps that own the data: each registers a source from its
AppConfig.ready(), so /metrics imports none of them (as console/clusters/dependents.py does for removal)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

PREFIX = "kafka_console_"


@dataclass(frozen=True)
class ScrapeOptions:
    partitions: bool = False  # per-partition series, only when the scrape asks (they multiply the series count)


@dataclass(frozen=True)
class MetricsSource:
    name: str
    # Sources are reported by `order`, not by app loading order, so a scrape's text stays the same from one
    # version to the next and two scrapes can be diffed.
    order: int
    collect: Callable[[ScrapeOptions], Iterable[Metric]]


_sources: dict[str, MetricsSource] = {}


def register_metrics(name: str, collect: Callable[[ScrapeOptions], Iterable[Metric]], *, order: int) -> None:
    # ready() may run more than once (tests that reload apps): the newest registration replaces the older one.
    _sources[name] = MetricsSource(name, order, collect)


def metrics_sources() -> list[MetricsSource]:
    return sorted(_sources.values(), key=lambda source: (source.order, source.name))


def gauge(name: str, help_text: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, help_text, labels=labels)


def counter(name: str, help_text: str, labels: list[str]) -> CounterMetricFamily:
    return CounterMetricFamily(PREFIX + name, help_text, labels=labels)
