"""The replay family of /metrics (jobs by state), registered from SparkjobsConfig.ready()."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count
from prometheus_client.core import Metric

from console.metrics.sources import ScrapeOptions, gauge
from sparkjobs.models import ReplayJob


def replay_counts() -> dict[str, int]:
    counts = dict(ReplayJob.objects.order_by().values("state").annotate(n=Count("id")).values_list("state", "n"))
    return {state: counts.get(state, 0) for state in ReplayJob.State.values}


def replay_metrics(options: ScrapeOptions) -> Iterator[Metric]:
    replays = gauge("replay_jobs", "Replay jobs by state.", ["state"])
    for state, n in replay_counts().items():
        replays.add_metric([state], n)
    yield replays
