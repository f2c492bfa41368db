"""Pure time-series logic: a reading's meters as rates since the sample before, and raw samples averaged into
minutes. No database, no Kafka: the sampler and the charts call these, and unit tests pin them down."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

from gateway.kafka.types import BrokerJmxReading, MeterReading


def meter_rate(now: MeterReading, before: int | None, elapsed_s: float | None) -> float:
    """Events per second since the sample before, from the meter's counts. Without one (the first sample), or when
    the count went back (the broker restarted), the meter's own one-minute rate stands in, so the series has no
    hole and never a negative rate."""
    if before is None or not elapsed_s or elapsed_s <= 0 or now.count < before:
        return max(0.0, now.one_minute_rate)
    return (now.count - before) / elapsed_s


def _rates(meters: dict[str, MeterReading], before: dict, elapsed_s: float | None) -> dict[str, float]:
    # Kafka makes a meter at its first event (a topic's at its first record, an API version's at its first
    # request): one missing from the sample before counted from 0 since then, so its whole count is this interval's.
    return {key: meter_rate(meter, before.get(key, 0 if elapsed_s else None), elapsed_s)
            for key, meter in meters.items()}


def reading_values(reading: BrokerJmxReading, counts: dict) -> tuple[dict, dict[str, dict], dict]:
    """(broker figures, topic -> figures, counts to keep for the next sample) of one good reading, given the
    counts kept from the sample before ({} for none)."""
    previous_at = counts.get("at")
    elapsed = reading.read_at - previous_at if previous_at else None
    broker = {**reading.gauges, **_rates(reading.meters, counts.get("broker", {}), elapsed)}
    before_topics = counts.get("topics", {})
    topics = {topic: _rates(meters, before_topics.get(topic, {}), elapsed) for topic, meters in reading.topics.items()}
    kept = {"at": reading.read_at, "broker": {k: m.count for k, m in reading.meters.items()},
            "topics": {t: {k: m.count for k, m in ms.items()} for t, ms in reading.topics.items()}}
    return broker, topics, kept


def minute_averages(rows: Iterable[tuple[tuple, float, dict]]) -> dict[tuple[tuple, int], dict[str, float]]:
    """(series key, epoch seconds, values) rows -> {(series key, minute start): the mean of each value over the
    rows in that minute}. A value missing from some rows is averaged over the rows that have it."""
    sums: dict[tuple[tuple, int], dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for key, at, values in rows:
        bucket = sums[(key, int(at // 60) * 60)]
        for name, value in values.items():
            if isinstance(value, int | float) and math.isfinite(value):
                bucket[name][0] += value
                bucket[name][1] += 1
    return {bucket: {name: total / n for name, (total, n) in values.items()} for bucket, values in sums.items()}


def summed(rows: Iterable[tuple[float, dict]], name: str) -> list[tuple[float, float]]:
    """One series of `name` summed over the rows sharing a time (every broker's share of a topic), oldest first."""
    totals: dict[float, float] = defaultdict(float)
    for at, values in rows:
        value = values.get(name)
        if isinstance(value, int | float):
            totals[at] += value
    return sorted(totals.items())
