"""Server-side SVG geometry for lag charts (pure: series in, coordinates out). No JavaScript chart library: the
chart is a few polylines, readable without scripts and cheap to swap with htmx."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#a16207", "#db2777")
COLUMN_PX = 2  # one plotted point per 2 px: the highest lag of the samples falling there, so spikes survive


@dataclass(frozen=True)
class Line:
    label: str
    color: str
    paths: tuple[str, ...]  # "x,y x,y ..." per unbroken stretch; a sampling gap starts a new one
    last: int | None
    peak: int


@dataclass(frozen=True)
class Tick:
    pos: float
    label: str
    anchor: str = "middle"  # SVG text-anchor: the last time label is right-aligned so it is not clipped


@dataclass(frozen=True)
class Marker:
    """Events at one place on the time axis (those closer than MARKER_GAP are one tick), drawn as a small tick
    under the plot, never across it: a busy ten minutes of changes would otherwise hide the data behind them."""

    x: float
    titles: tuple[str, ...]
    first_s: float = 0.0  # the time span of the events grouped here
    last_s: float = 0.0
    url: str = ""  # where the tick leads: the event, or the events of its span
    count: int = 1  # events grouped here (titles names the first MARKER_TITLES_KEPT)

    @property
    def title(self) -> str:
        return "\n".join(self.titles)


MARKER_GAP = 12  # chart units (a 760-wide chart): ticks closer than this are grouped
MARKER_TITLES_KEPT = 20  # a group's tooltip names this many events, then how many more


def marker_ticks(events: list[tuple[float, float, str, str]], *, gap: float = MARKER_GAP) -> tuple[Marker, ...]:
    """events: (x, time, title, url) in any order. Events closer than `gap` on the axis become one tick (at the
    first one's place, oldest first); a group keeps the first event's url, which its caller may replace."""
    ticks: list[list[tuple[float, float, str, str]]] = []
    for event in sorted(events, key=lambda e: (e[0], e[1])):
        if ticks and event[0] - ticks[-1][0][0] < gap:
            ticks[-1].append(event)
        else:
            ticks.append([event])
    out = []
    for group in ticks:
        titles = [title for _, _, title, _ in group]
        if len(titles) > MARKER_TITLES_KEPT:
            titles = titles[:MARKER_TITLES_KEPT] + [f"and {len(titles) - MARKER_TITLES_KEPT} more"]
        out.append(Marker(x=group[0][0], titles=tuple(titles), first_s=group[0][1], last_s=group[-1][1],
                          url=group[0][3], count=len(group)))
    return tuple(out)


@dataclass(frozen=True)
class Point:
    """A sample drawn as a dot one can aim at (the lag chart's "reset to here")."""

    x: float
    y: float
    series: str
    time_s: float
    lag: int

    @property
    def at(self) -> datetime:
        return datetime.fromtimestamp(self.time_s, UTC)

    @property
    def at_local_input(self) -> str:
        """The time as a datetime-local value in UTC, to the second."""
        return self.at.strftime("%Y-%m-%dT%H:%M:%S")

    @property
    def at_label(self) -> str:
        return self.at.strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class ChartGeometry:
    width: int
    height: int
    left: int
    top: int
    right: int
    bottom: int
    lines: tuple[Line, ...]
    y_ticks: tuple[Tick, ...]
    x_ticks: tuple[Tick, ...]
    markers: tuple[Marker, ...]
    points: tuple[Point, ...] = ()


def compact(value: float) -> str:
    """1234 → 1.2k, 5600000 → 5.6M."""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            text = f"{value / limit:.1f}".rstrip("0").rstrip(".")
            return text + suffix
    return f"{value:.0f}"


def nice_step(value: float) -> float:
    """The smallest 1, 2 or 5 × 10^n not below value (at least 1)."""
    if value <= 1:
        return 1
    exponent = 10 ** math.floor(math.log10(value))
    for factor in (1, 2, 5, 10):
        if factor * exponent >= value:
            return factor * exponent
    return 10 * exponent


def value_ticks(peak: float) -> list[float]:
    """0 up to the first multiple of a round step at or above the peak, in at most 5 steps."""
    step = nice_step(peak / 4)
    return [step * k for k in range(max(1, math.ceil(peak / step)) + 1)]


TIME_STEPS_S = (60, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400)


def time_ticks(start_s: float, end_s: float, most: int = 7) -> list[float]:
    """Round UTC times (whole minutes, hours or days) in the range, at most `most` of them."""
    span = end_s - start_s
    step = next((s for s in TIME_STEPS_S if span / s <= most), TIME_STEPS_S[-1])
    first = math.ceil(start_s / step) * step
    return [first + k * step for k in range(int((end_s - first) // step) + 1)]


def _segments(points: list[tuple[float, int]], gap_s: float) -> list[list[tuple[float, int]]]:
    segments: list[list[tuple[float, int]]] = []
    for point in points:
        if not segments or point[0] - segments[-1][-1][0] > gap_s:
            segments.append([])
        segments[-1].append(point)
    return segments


def _time_label(moment: float, span_s: float) -> str:
    at = datetime.fromtimestamp(moment, UTC)
    return at.strftime("%H:%M") if span_s <= 86400 else at.strftime("%b %d %H:%M")


def spread_samples(points: list[tuple[float, int]], *, start_s: float, end_s: float,
                   most: int) -> list[tuple[float, int]]:
    """At most `most` of the samples, spread over the frame: the first sample of each of `most` equal slices."""
    if most <= 0:
        return []
    width = max(1.0, end_s - start_s) / most
    chosen: dict[int, tuple[float, int]] = {}
    for t, v in points:
        if start_s <= t <= end_s:
            chosen.setdefault(min(most - 1, int((t - start_s) // width)), (t, v))
    return [chosen[k] for k in sorted(chosen)]


def with_span_links(geometry: ChartGeometry, span_url) -> ChartGeometry:
    """The geometry with each tick of several events leading to `span_url(first_s, last_s)` (the log over its
    span) instead of its first event."""
    return replace(geometry, markers=tuple(m if m.count == 1 else replace(m, url=span_url(m.first_s, m.last_s))
                                           for m in geometry.markers))


def chart_geometry(series: list[tuple[str, list[tuple[float, int]]]], *, start_s: float, end_s: float, gap_s: float,
                   markers: list[tuple] = (), width: int = 760, height: int = 220,
                   pointed: set[str] = frozenset(), points_per_series: int = 0) -> ChartGeometry:
    """series: (label, [(epoch seconds, lag), ...] oldest first). Times outside [start_s, end_s] are dropped.
    The series named in `pointed` also get up to `points_per_series` dots at their samples. markers: (epoch
    seconds, title[, url]), grouped into ticks on the time axis (marker_ticks)."""
    left, top, right, bottom = 56, 10, width - 10, height - 30  # below the plot: marker ticks, then times
    span = max(1.0, end_s - start_s)
    peak_all = max((v for _, pts in series for t, v in pts if start_s <= t <= end_s), default=0)
    values = value_ticks(peak_all)
    y_max = values[-1]

    def x_of(t: float) -> float:
        return left + (t - start_s) / span * (right - left)

    def y_of(v: float) -> float:
        return bottom - v / y_max * (bottom - top)

    lines = []
    for i, (label, points) in enumerate(series):
        points = [(t, v) for t, v in points if start_s <= t <= end_s]
        paths = []
        for segment in _segments(points, gap_s):
            columns: dict[int, tuple[float, int]] = {}
            for t, v in segment:
                column = int(x_of(t) // COLUMN_PX)
                if column not in columns or v > columns[column][1]:
                    columns[column] = (t, v)
            coords = [(x_of(t), y_of(v)) for t, v in sorted(columns.values())]
            if len(coords) == 1:  # a lone sample between gaps still shows, as a short dash
                coords.append((coords[0][0] + 1.5, coords[0][1]))
            paths.append(" ".join(f"{x:.1f},{y:.1f}" for x, y in coords))
        lines.append(Line(label=label, color=PALETTE[i % len(PALETTE)], paths=tuple(paths),
                          last=points[-1][1] if points else None, peak=max((v for _, v in points), default=0)))
    y_ticks = tuple(Tick(pos=y_of(v), label=compact(v)) for v in values)
    times = time_ticks(start_s, start_s + span)
    x_ticks = tuple(Tick(pos=x_of(t), label=_time_label(t, span),
                         anchor="end" if x_of(t) > right - 20 else "start" if x_of(t) < left + 20 else "middle")
                    for t in times)
    shown_markers = marker_ticks([(x_of(m[0]), m[0], m[1], m[2] if len(m) > 2 else "")
                                  for m in markers if start_s <= m[0] <= end_s])
    points = tuple(Point(x=x_of(t), y=y_of(v), series=label, time_s=t, lag=v)
                   for label, samples in series if label in pointed
                   for t, v in spread_samples(samples, start_s=start_s, end_s=end_s, most=points_per_series))
    return ChartGeometry(width=width, height=height, left=left, top=top, right=right, bottom=bottom,
                         lines=tuple(lines), y_ticks=y_ticks, x_ticks=x_ticks, markers=shown_markers, points=points)


def sparkline(values: list[int | None], *, width: int = 80, height: int = 18) -> str:
    """Polyline points for a small inline trend; missing samples are skipped."""
    known = [(i, v) for i, v in enumerate(values) if v is not None]
    if len(known) < 2:
        return ""
    top = max(v for _, v in known) or 1
    step = width / max(1, len(values) - 1)
    return " ".join(f"{i * step:.1f},{height - 1 - v / top * (height - 2):.1f}" for i, v in known)
