"""The broker families of /metrics: the figures the sampler last stored per broker (never read from JMX during a
scrape), whether each broker's JMX answered, and when each cluster was last sampled. Registered from
BrokersConfig.ready()."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import Metric

from brokers.models import BrokerState, SamplerRun
from brokers.selectors import FIGURES
from console.metrics.sources import ScrapeOptions, gauge

# Prometheus names: rates end in _per_second, the rest say what they count.
_NAMES = {"bytes_in": "bytes_in_per_second", "bytes_out": "bytes_out_per_second",
          "messages_in": "messages_in_per_second", "produce_requests": "produce_requests_per_second",
          "fetch_requests": "fetch_consumer_requests_per_second", "produce_p99_ms": "produce_p99_milliseconds",
          "fetch_p99_ms": "fetch_consumer_p99_milliseconds", "request_idle_pct": "request_handler_idle_percent",
          "network_idle_pct": "network_processor_idle_percent", "under_replicated": "under_replicated_partitions",
          "under_min_isr": "under_min_isr_partitions", "offline_partitions": "offline_partitions",
          "active_controllers": "active_controller_count", "isr_shrinks": "isr_shrinks_per_second",
          "isr_expands": "isr_expands_per_second"}


def broker_metrics(options: ScrapeOptions) -> Iterator[Metric]:
    families = {key: gauge(f"broker_{_NAMES[key]}", f"{label}, as the broker sampler last read it over JMX",
                           ["cluster", "broker"]) for key, label, _ in FIGURES}
    answering = gauge("broker_jmx_up", "1 when the broker's JMX gave figures at the last sample", ["cluster", "broker"])
    for state in BrokerState.objects.order_by("cluster", "broker"):
        labels = [state.cluster, str(state.broker)]
        failing = state.last_error_at is not None and (state.last_ok_at is None or
                                                       state.last_error_at > state.last_ok_at)
        answering.add_metric(labels, 0.0 if failing else 1.0)
        if failing:
            continue
        for key, value in (state.latest or {}).items():
            if key in families and isinstance(value, int | float):
                families[key].add_metric(labels, float(value))
    sampled = gauge("broker_sampler_last_run_timestamp_seconds", "when the broker sampler last ran for the cluster",
                    ["cluster"])
    behind = gauge("broker_sampler_behind", "1 when the broker sampler missed samples or took longer than its "
                                            "interval", ["cluster"])
    for run in SamplerRun.objects.order_by("cluster"):
        if run.last_run_at is not None:
            sampled.add_metric([run.cluster], run.last_run_at.timestamp())
        behind.add_metric([run.cluster], 1.0 if run.behind else 0.0)
    yield from (*families.values(), answering, sampled, behind)
