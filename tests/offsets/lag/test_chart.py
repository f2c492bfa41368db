from offsets.lag.chart import (MARKER_GAP, MARKER_TITLES_KEPT, chart_geometry, compact, marker_ticks, sparkline,
                               time_ticks, value_ticks, with_span_links)


def test_compact_numbers():
    assert [compact(v) for v in (0, 999, 1000, 1250, 2_500_000, 3e9)] == ["0", "999", "1k", "1.2k", "2.5M", "3G"]


def test_value_ticks_are_round_and_cover_the_peak():
    assert value_ticks(0) == [0, 1]
    assert value_ticks(7) == [0, 2, 4, 6, 8]
    assert value_ticks(1000) == [0, 500, 1000]
    assert value_ticks(4877) == [0, 2000, 4000, 6000]
    assert value_ticks(123_456) == [0, 50_000, 100_000, 150_000]


def test_time_ticks_fall_on_round_utc_times():
    assert time_ticks(125, 3725) == [600 * k for k in range(1, 7)]  # every 10 min within the hour
    assert time_ticks(1000, 1000 + 6 * 3600) == [3600 * k for k in range(1, 7)]
    assert time_ticks(0, 7 * 86400) == [86400 * k for k in range(8)]


def test_geometry_scales_to_the_plot_area_and_keeps_spikes():
    # 600 samples in 60 s on a 760 px chart: several per 2 px column; the spike must survive the thinning
    pts = [(float(i) / 10, 100) for i in range(600)]
    pts[300] = (30.0, 1000)
    g = chart_geometry([("t", pts)], start_s=0, end_s=60, gap_s=5)
    (line,) = g.lines
    assert line.peak == 1000 and line.last == 100
    ys = [float(p.split(",")[1]) for p in line.paths[0].split()]
    assert min(ys) == g.top  # the spike reaches the top: y axis max is the nice ceiling 1000
    assert max(ys) == g.bottom - 100 / 1000 * (g.bottom - g.top)
    assert len(line.paths[0].split()) <= (g.right - g.left) // 2 + 1
    assert [t.label for t in g.y_ticks] == ["0", "500", "1k"]


def test_gaps_break_the_line_and_lone_samples_still_show():
    pts = [(0, 5), (10, 6), (20, 7), (200, 9), (400, 3), (410, 4)]
    g = chart_geometry([("t", pts)], start_s=0, end_s=410, gap_s=25)
    paths = g.lines[0].paths
    assert len(paths) == 3
    assert len(paths[1].split()) == 2  # the lone sample at 200 s drawn as a short dash


def test_points_and_markers_outside_the_range_are_dropped():
    g = chart_geometry([("t", [(-50, 10**6), (10, 5), (20, 6)])], start_s=0, end_s=60, gap_s=30,
                       markers=[(-1, "old"), (30, "rebalance: generation 4, 2 members")])
    assert g.lines[0].peak == 6
    assert [m.title for m in g.markers] == ["rebalance: generation 4, 2 members"]
    assert g.left < g.markers[0].x < g.right


def test_time_labels_switch_to_dates_beyond_a_day():
    short = chart_geometry([], start_s=0, end_s=3600, gap_s=60)
    long = chart_geometry([], start_s=0, end_s=7 * 86400, gap_s=3600)
    assert short.x_ticks[0].label == "00:00"
    assert long.x_ticks[-1].label == "Jan 08 00:00"


def test_sparkline():
    assert sparkline([None, 4]) == ""
    assert sparkline([0, None, 10], width=10, height=12) == "0.0,11.0 10.0,1.0"


def test_markers_are_ticks_on_the_time_axis_grouped_when_close():
    # 30 changes within a minute on a 760-wide chart of an hour: 0.4 units apart, so one tick, not 30 lines
    busy = [(1800 + 2 * i, f"#{i} topic.config.alter by otto", f"/audit/{i}/") for i in range(30)]
    g = chart_geometry([("t", [(0, 1), (3600, 2)])], start_s=0, end_s=3600, gap_s=60,
                       markers=busy + [(3000, "rebalance: generation 9, 2 members")])
    first, lone = g.markers
    assert (first.count, lone.count) == (30, 1) and first.url == "/audit/0/" and lone.url == ""
    assert (first.first_s, first.last_s) == (1800, 1858) and first.title.startswith("#0 topic.config.alter")
    ten_minutes = chart_geometry([], start_s=0, end_s=3600, gap_s=60,
                                 markers=[(1800 + 20 * i, "x", "") for i in range(30)])
    assert len(ten_minutes.markers) < 15 and sum(m.count for m in ten_minutes.markers) == 30
    assert lone.x - first.x >= MARKER_GAP


def test_a_tick_keeps_its_first_events_and_says_how_many_more():
    ticks = marker_ticks([(100.0 + i / 10, float(i), f"e{i}", "") for i in range(MARKER_TITLES_KEPT + 5)])
    (tick,) = ticks
    assert tick.titles[-1] == "and 5 more" and len(tick.titles) == MARKER_TITLES_KEPT + 1
    assert tick.count == MARKER_TITLES_KEPT + 5
    spread = marker_ticks([(0.0, 0.0, "a", ""), (MARKER_GAP - 1, 1.0, "b", ""), (MARKER_GAP + 1, 2.0, "c", "")])
    assert [t.titles for t in spread] == [("a", "b"), ("c",)]  # grouped from the first of a tick, not chained


def test_ticks_of_several_events_lead_to_their_span():
    g = chart_geometry([], start_s=0, end_s=3600, gap_s=60, markers=[(10, "a", "/audit/1/"), (11, "b", "/audit/2/"),
                                                                      (3000, "c", "/audit/3/")])
    linked = with_span_links(g, lambda first, last: f"/audit/?since={first:.0f}&until={last:.0f}")
    assert [m.url for m in linked.markers] == ["/audit/?since=10&until=11", "/audit/3/"]
