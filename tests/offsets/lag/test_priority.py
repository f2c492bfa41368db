from offsets.lag.priority import PreviousSample, previous_sample, sweep_order


def seen(status="OK", lag=0, change=0, at=100.0):
    return PreviousSample(status=status, lag=lag, change=change, sampled_at=at)


def test_previous_sample_reads_the_last_lag_and_its_last_move():
    assert previous_sample("WARN", [5, None, 9, 14], 30.0) == PreviousSample("WARN", 14, 5, 30.0)
    assert previous_sample("", [7], None) == PreviousSample("", 7, 0, None)
    assert previous_sample("", [None, None], None).lag is None
    assert previous_sample("OK", [20, 3], 1.0).change == 17  # shrinking lag moves too


def test_worst_status_then_most_lag_then_most_movement_first():
    previous = {"ok-big": seen(lag=900), "err": seen("ERR", lag=5), "stop": seen("STOP", lag=50),
                "warn": seen("WARN", lag=70), "ok-moving": seen(lag=0, change=40), "ok-small": seen(lag=3),
                "ok-small-moving": seen(lag=3, change=1)}
    order = sweep_order(["ok-small", "ok-moving", "ok-big", "warn", "stop", "ok-small-moving", "err"], previous)
    assert order == ["err", "stop", "warn", "ok-big", "ok-small-moving", "ok-small", "ok-moving"]


def test_unknown_groups_come_after_urgent_ones_and_before_quiet_ones():
    previous = {"lagging": seen(lag=1), "quiet": seen(), "no-offsets": PreviousSample("", None, 0, 5.0)}
    assert sweep_order(["quiet", "new-b", "no-offsets", "lagging", "new-a"], previous) == [
        "lagging", "new-b", "no-offsets", "new-a", "quiet"]


def test_quiet_groups_least_recently_sampled_first_so_none_starves():
    previous = {"a": seen(at=300.0), "b": seen(at=100.0), "c": seen(at=None), "d": seen(at=200.0)}
    assert sweep_order(["a", "b", "c", "d"], previous) == ["c", "b", "d", "a"]


def test_ties_keep_the_listing_order_and_nothing_is_lost():
    names = [f"g{i}" for i in range(50)]
    previous = {name: seen(lag=10) for name in names}
    assert sweep_order(names, previous) == names
    assert sweep_order([], {}) == []
