"""Throughput and health charts from the stored samples, with the console's own audited actions on the same time
axis: each marker links to its audit event, so cause and effect line up (a reset on its topic's chart, a broker's
config change on the broker's, everything on the cluster's)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db.models import Q

from brokers import conf
from brokers.models import BrokerSample, SamplerRun
from brokers.series import summed
from console.audit.links import audit_event_url, audit_span_url
from console.audit.models import AuditEvent
from console.errors import ConsoleError
from offsets.lag.chart import ChartGeometry, chart_geometry, with_span_links

RANGES = {"1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400}
DEFAULT_RANGE = "1h"
MSG_RANGE = "Unknown range '{range}': one of " + ", ".join(RANGES) + "."
MAX_MARKERS = 200


@dataclass(frozen=True)
class BrokerChart:
    title: str
    unit: str
    range_key: str
    geometry: ChartGeometry
    has_data: bool
    step_label: str

    @property
    def ranges(self) -> tuple[str, ...]:
        return tuple(RANGES)


def range_seconds(range_key: str | None) -> tuple[str, int]:
    key = range_key or DEFAULT_RANGE
    if key not in RANGES:
        raise ConsoleError(MSG_RANGE.format(range=key))
    return key, RANGES[key]


def _rows(cluster: str, *, start: datetime, broker: int | None, topic: str) -> tuple[list, int]:
    """(at seconds, values) rows for the range: raw samples up to a day back, minute averages beyond (and the raw
    samples not averaged yet, so a long range still reaches now)."""
    query = BrokerSample.objects.filter(cluster=cluster, topic=topic, at__gte=start)
    if broker is not None:
        query = query.filter(broker=broker)
    if (datetime.now(UTC) - start).total_seconds() <= conf.raw_retention_s():
        step = BrokerSample.RAW
        query = query.filter(step=step)
    else:
        step = BrokerSample.MINUTE
        rolled = (SamplerRun.objects.filter(cluster=cluster).values_list("rolled_until", flat=True).first() or 0.0)
        query = query.filter(Q(step=step) | Q(step=BrokerSample.RAW, at__gte=datetime.fromtimestamp(rolled, UTC)))
    rows = [(at.timestamp(), values) for at, values in query.order_by("at").values_list("at", "values").iterator(5000)]
    return rows, step


def _markers(cluster: str, *, start: datetime, broker: int | None, topic: str) -> list[tuple[float, str, int]]:
    events = AuditEvent.objects.filter(cluster=cluster, created_at__gte=start, outcome=AuditEvent.Outcome.SUCCESS)
    if topic:  # the topic's own changes, and resets that moved offsets on it (their targets name its partitions)
        events = events.filter(Q(target=f"topic:{topic}") | Q(params__targets__has_key=topic))
    elif broker is not None:
        events = events.filter(target=f"broker:{broker}")
    events = events.order_by("-seq")[:MAX_MARKERS]
    return [(e.created_at.timestamp(), f"#{e.seq} {e.action} {e.target} by {e.actor_name}", e.seq) for e in events]


def chart(cluster: str, *, title: str, series: list[tuple[str, str]], unit: str, range_key: str | None = None,
          broker: int | None = None, topic: str = "", width: int = 760, height: int = 200) -> BrokerChart:
    """series: (label, figure key). Figures are summed over brokers for a cluster's or a topic's chart."""
    key, seconds = range_seconds(range_key)
    now = datetime.now(UTC)
    start = datetime.fromtimestamp(now.timestamp() - seconds, UTC)
    rows, step = _rows(cluster, start=start, broker=broker, topic=topic)
    lines = [(label, summed(rows, name)) for label, name in series]
    gap = 3 * conf.sample_interval_s() if step == BrokerSample.RAW else 180.0
    events = _markers(cluster, start=start, broker=broker, topic=topic)
    geometry = chart_geometry(lines, start_s=start.timestamp(), end_s=now.timestamp(), gap_s=gap, width=width,
                              height=height, markers=[(t, text, audit_event_url(seq)) for t, text, seq in events])
    # A tick of several events leads to the log over their span (a broker's: its own changes).
    target = f"broker:{broker}" if broker is not None and not topic else ""
    geometry = with_span_links(geometry, lambda first_s, last_s: audit_span_url(
        cluster=cluster, first_s=first_s, last_s=last_s, target=target))
    return BrokerChart(title=title, unit=unit, range_key=key, geometry=geometry,
                       has_data=any(points for _, points in lines),
                       step_label="every sample" if step == BrokerSample.RAW else "minute averages")
