"""A prometheus_client collector over the sources the apps registered (console/metrics/sources.py). Each source
runs a fixed handful of queries on the console's own tables and never calls Kafka: a down or slow cluster shows
up as an old `..._last_success_timestamp_seconds`, not as a hung scrape."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from console.metrics.sources import ScrapeOptions, metrics_sources


class ConsoleCollector(Collector):
    def __init__(self, *, partitions: bool = False) -> None:
        self.options = ScrapeOptions(partitions=partitions)

    def collect(self) -> Iterator[Metric]:
        for source in metrics_sources():
            yield from source.collect(self.options)
