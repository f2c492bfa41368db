"""The lag chart's frame when no range is asked for: it fits the samples there are."""

from datetime import UTC, datetime, timedelta

from offsets.lag.chart import chart_geometry, spread_samples
from offsets.lag.selectors import DEFAULT_RANGE, FIT_MIN_S, RANGES, fitted_range_s

NOW = datetime(2026, 1, 31, 3, 0, tzinfo=UTC)


def test_five_minutes_of_samples_get_the_minimum_frame_not_six_hours():
    assert fitted_range_s(NOW - timedelta(minutes=5), NOW) == FIT_MIN_S == 900


def test_longer_histories_get_their_span_with_a_margin_in_whole_minutes():
    assert fitted_range_s(NOW - timedelta(hours=2), NOW) == 126 * 60
    assert fitted_range_s(NOW - timedelta(minutes=20, seconds=10), NOW) == 22 * 60


def test_the_frame_stops_at_the_longest_range_and_is_the_default_without_samples():
    assert fitted_range_s(NOW - timedelta(days=90), NOW) == max(RANGES.values())
    assert fitted_range_s(None, NOW) == RANGES[DEFAULT_RANGE]


def test_spread_samples_keeps_the_first_of_each_slice():
    samples = [(float(t), t) for t in range(0, 100)]
    assert spread_samples(samples, start_s=0, end_s=100, most=4) == [(0.0, 0), (25.0, 25), (50.0, 50), (75.0, 75)]
    few = [(0.0, 0), (5.0, 5), (9.0, 9)]  # slices of 100/24 s: each in its own
    assert spread_samples(few, start_s=0, end_s=100, most=24) == few
    assert spread_samples(samples[:3], start_s=0, end_s=100, most=24) == [(0.0, 0)]  # one slice
    assert spread_samples(samples, start_s=0, end_s=100, most=0) == []
    assert spread_samples([(100.0, 1), (150.0, 2)], start_s=0, end_s=100, most=4) == [(100.0, 1)]


def test_points_sit_on_their_series_and_only_pointed_series_get_them():
    series = [("all topics", [(0.0, 10), (60.0, 20)]), ("orders", [(0.0, 10), (60.0, 20)])]
    g = chart_geometry(series, start_s=0, end_s=60, gap_s=90, pointed={"orders"}, points_per_series=24)

    assert [(p.series, p.lag) for p in g.points] == [("orders", 10), ("orders", 20)]
    first, last = g.points
    assert (first.x, last.x) == (g.left, g.right) and last.y == g.top  # 20 is the y axis' top tick
    assert first.at_local_input == "1970-01-01T00:00:00" and last.at_label == "1970-01-01 00:01:00"
