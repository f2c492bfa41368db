"""The connector families of /metrics, from what connectors_observe stored (never from Connect, so a scrape stays
fast whatever the workers do): one series per connector and state (1 for its state, 0 for the others), tasks per
state, and when each Connect cluster was last observed. Registered from ConnectConfig.ready()."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from prometheus_client.core import Metric

from connect.models import ConnectCluster, ConnectorSnapshot
from gateway.kafka_connect.types import STATES
from console.metrics.sources import ScrapeOptions, gauge


def connector_metrics(options: ScrapeOptions) -> Iterator[Metric]:
    state = gauge("connector_state", "1 for the connector's state as last observed, 0 for the other states",
                  ["cluster", "connect", "connector", "type", "state"])
    tasks = gauge("connector_tasks", "tasks of the connector in each state, as last observed",
                  ["cluster", "connect", "connector", "state"])
    task_state = gauge("connector_task_state", "1 for each task's state as last observed",
                       ["cluster", "connect", "connector", "task", "state"])
    for snap in ConnectorSnapshot.objects.order_by("cluster", "connect", "connector").iterator(1000):
        labels = [snap.cluster, snap.connect, snap.connector]
        for name in STATES:
            state.add_metric([*labels, snap.type, name], 1.0 if snap.state == name else 0.0)
        counts = Counter(task["state"] for task in snap.tasks)
        for name in STATES:
            tasks.add_metric([*labels, name], float(counts.get(name, 0)))
        for task in snap.tasks:
            task_state.add_metric([*labels, str(task["id"]), task["state"]], 1.0)
    observed = gauge("connect_last_observed_timestamp_seconds", "when the Connect cluster last answered the console",
                     ["cluster", "connect"])
    failing = gauge("connect_observe_failing", "1 when the last look at the Connect cluster failed",
                    ["cluster", "connect"])
    for registration in ConnectCluster.objects.order_by("cluster", "name"):
        labels = [registration.cluster, registration.name]
        if registration.observed_at is not None and not registration.observe_error:
            observed.add_metric(labels, registration.observed_at.timestamp())
        failing.add_metric(labels, 1.0 if registration.observe_error else 0.0)
    yield from (state, tasks, task_state, observed, failing)
