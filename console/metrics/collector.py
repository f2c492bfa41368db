"""A prometheus_client collector over the console's own tables. Each scrape runs a fixed handful of queries and
never calls Kafka: a down or slow cluster shows up as an old `..._last_success_timestamp_seconds`, not as a hung
scrape.

Cardinality: lag per cluster, group and topic; status and rebalances per cluster and group, for the groups each
cluster's latest lag sweep listed. Per partition only when the scrape asks (`?partitions=1`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from console.metrics import selectors
from offsets.lag.status import SEVERITY
from offsets.models import RecorderStatus

PREFIX = "kafka_console_"
RECORDER_STATES = (RecorderStatus.RECORDING, RecorderStatus.SAMPLING, RecorderStatus.WAITING, RecorderStatus.STOPPED)
# "" is the sampler's "collecting samples" (or "no committed offsets"): no verdict yet, below OK.
STATUS_HELP = ", ".join(f"{value} {name or 'collecting'}"
                        for name, value in sorted(SEVERITY.items(), key=lambda item: item[1]))


def _gauge(name: str, help_text: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, help_text, labels=labels)


class ConsoleCollector(Collector):
    def __init__(self, *, partitions: bool = False) -> None:
        self.partitions = partitions

    def collect(self) -> Iterator[Metric]:
        now = time.time()
        sweeps = selectors.lag_sweeps()
        yield from self._groups(sweeps)
        if self.partitions:
            yield self._partition_lag()
        yield from self._sampler(sweeps)
        yield from self._recorder(now)
        audit = CounterMetricFamily(PREFIX + "audit_events_total", "Audit events by action and outcome.",
                                    labels=["action", "outcome"])
        for (action, outcome), n in sorted(selectors.audit_counts().items()):
            audit.add_metric([action, outcome], n)
        yield audit
        replays = _gauge("replay_jobs", "Replay jobs by state.", ["state"])
        for state, n in selectors.replay_counts().items():
            replays.add_metric([state], n)
        yield replays

    def _groups(self, sweeps) -> Iterator[Metric]:
        lag = _gauge("group_lag", "Records the group has not consumed yet on the topic, summed over the partitions "
                                  "it committed, at the cluster's newest lag sweep.", ["cluster", "group", "topic"])
        for cluster, group, topic, value in selectors.newest_group_lag(sweeps):
            lag.add_metric([cluster, group, topic], value)
        yield lag
        status = _gauge("group_status", f"Lag status of the group as a severity: {STATUS_HELP}.", ["cluster", "group"])
        for cluster, group, value in selectors.group_statuses():
            status.add_metric([cluster, group], SEVERITY.get(value, 0))
        yield status
        rebalances = CounterMetricFamily(
            PREFIX + "group_rebalances_total", "Generations (classic protocol) or assignment epochs (consumer "
            "protocol) of the group that the recorder stored.", labels=["cluster", "group"])
        for cluster, group, n in selectors.group_rebalances():
            rebalances.add_metric([cluster, group], n)
        yield rebalances

    def _partition_lag(self) -> Metric:
        lag = _gauge("group_partition_lag", "Records the group has not consumed yet on one partition, at the "
                                            "cluster's newest lag sweep.", ["cluster", "group", "topic", "partition"])
        for cluster, group, window in selectors.group_windows():
            for key, series in (window or {}).get("partitions", {}).items():
                newest = series[-1] if series else None
                if newest is None:  # not committed (or its leader silent) at the newest sweep
                    continue
                topic, _, partition = key.rpartition("-")
                lag.add_metric([cluster, group, topic, partition], max(0, newest[1] - newest[0]))
        return lag

    def _sampler(self, sweeps) -> Iterator[Metric]:
        duration = _gauge("lag_sampler_duration_seconds", "How long the last successful lag sweep took.", ["cluster"])
        success = _gauge("lag_sampler_last_success_timestamp_seconds", "When the last successful lag sweep ran.",
                         ["cluster"])
        error = _gauge("lag_sampler_last_error_timestamp_seconds", "When a lag sweep last failed.", ["cluster"])
        groups = _gauge("lag_sampler_groups", "Groups the last successful lag sweep listed.", ["cluster"])
        partitions = _gauge("lag_sampler_partitions", "Committed partitions the last successful lag sweep measured.",
                            ["cluster"])
        skipped = _gauge("lag_sampler_skipped_groups", "Groups the last successful lag sweep listed but had no time "
                                                       "(or no answer) for; they keep their earlier status.", ["cluster"])
        for sweep in sweeps:
            if sweep.last_ok_at is not None:
                success.add_metric([sweep.cluster], sweep.last_ok_at.timestamp())
                duration.add_metric([sweep.cluster], sweep.duration_ms / 1000)
                groups.add_metric([sweep.cluster], sweep.groups)
                partitions.add_metric([sweep.cluster], sweep.partitions)
                skipped.add_metric([sweep.cluster], sweep.skipped_groups)
            if sweep.last_error_at is not None:
                error.add_metric([sweep.cluster], sweep.last_error_at.timestamp())
        yield from (duration, success, error, groups, partitions, skipped)

    def _recorder(self, now: float) -> Iterator[Metric]:
        behind = _gauge("recorder_behind_records", "Offsets of __consumer_offsets the recorder has not read yet, "
                                                   "as of its last look at their ends.", ["cluster"])
        age = _gauge("recorder_behind_seconds", "Seconds since the time up to which the recorder's rebalance "
                                                "history is complete.", ["cluster"])
        state = _gauge("recorder_state", "The recorder's state: 1 for the current one of "
                                         f"{', '.join(RECORDER_STATES)}, 0 for the others.", ["cluster", "state"])
        for status in selectors.recorder_statuses():
            if status.behind_records is not None:
                behind.add_metric([status.cluster], status.behind_records)
            if status.recorded_up_to is not None:
                age.add_metric([status.cluster], max(0.0, now - status.recorded_up_to.timestamp()))
            for name in RECORDER_STATES:
                state.add_metric([status.cluster, name], 1 if status.state == name else 0)
        yield from (behind, age, state)
