"""The trend sentence and the status it sits beside (offsets/lag/trend.py): generated histories, judged by both of the
status's implementations, never read OK beside "not catching up"."""

import math
import random

import pytest

from offsets.lag.status import ERR, OK, STOP, WARN, group_verdict
from offsets.lag.trend import (CATCHING_UP, CAUGHT_UP, FALLING_BEHIND, NOT_CONSUMING, REWOUND, RISING, STEADY, LagSeries,
                               judge_trend)
from offsets.lag.window import LagWindow
from offsets.lag.window_batch import WindowBatch

NOW = 100_000.0
STEP = 30.0
SIZE = 10  # settings.LAG_STATUS_WINDOW's default
OK_KINDS = {CAUGHT_UP, CATCHING_UP, STEADY}


def window_of(samples: list[dict[str, tuple[int, int]]]) -> LagWindow:
    window = LagWindow()
    start = NOW - STEP * (len(samples) - 1)
    for i, observed in enumerate(samples):
        window = window.append(start + i * STEP, observed, SIZE)
    return window


def oscillating(seed: int, partitions: int = 12, samples: int = SIZE, low: int = 3, high: int = 6):
    """A live group keeping pace: producers write 5 to 15 records a partition between samples, and the group's
    total lag swings between `low` and `high` (spread over random partitions, most of them caught up)."""
    rng = random.Random(seed)
    ends = [rng.randrange(1_000, 50_000) for _ in range(partitions)]
    phase = rng.random() * math.tau
    history = []
    for i in range(samples):
        ends = [e + rng.randrange(5, 16) for e in ends]
        total = round(low + (high - low) * (0.5 + 0.5 * math.sin(phase + i * 1.3))) + rng.choice((-1, 0, 1))
        total = min(high, max(low, total))
        lags = [0] * partitions
        for _ in range(total):
            lags[rng.randrange(partitions)] += 1
        history.append({f"clicks-{p}": (ends[p] - lags[p], ends[p]) for p in range(partitions)})
    return history


def verdicts_of(window: LagWindow, *, members=True, last_commit=NOW):
    """The status as the page's row holds it, by the sweep's batch code and by the reference rules: they agree."""
    batch = WindowBatch([window.to_bytes()], SIZE)
    swept = batch.verdicts([members], [last_commit], NOW)[0]
    reference = group_verdict(window, has_members=members, last_commit_s=last_commit, now_s=NOW)
    assert (swept.status, swept.partitions) == (reference.status, reference.partitions)
    return reference


@pytest.mark.parametrize("seed", range(200))
def test_a_lag_swinging_in_a_band_is_ok_and_steady_never_not_catching_up(seed):
    window = window_of(oscillating(seed))
    verdict = verdicts_of(window)
    series = LagSeries.from_window(window)
    trend = judge_trend(verdict.status, series)

    assert 3 <= min(series.lags) and max(series.lags) <= 6
    assert verdict.status == OK and verdict.reason == "12 partitions consuming or caught up"
    assert trend.kind in OK_KINDS and trend.tone == "ok", trend.text
    assert "not catching up" not in trend.text.lower() and "not consuming" not in trend.text.lower()


def test_the_issue_s_group_reads_steady_between_its_bounds():
    series = LagSeries(times=tuple(NOW + STEP * i for i in range(6)), lags=(3, 6, 4, 6, 3, 6),
                       committed=tuple(1000 + 10 * i - lag for i, lag in enumerate((3, 6, 4, 6, 3, 6))),
                       ends=tuple(1000 + 10 * i for i in range(6)))
    trend = judge_trend(OK, series)
    assert trend.kind == STEADY and "between 3 and 6" in trend.text and "keeps pace" in trend.text


@pytest.mark.parametrize("seed", range(100))
def test_whatever_the_history_the_sentence_belongs_to_the_status(seed):
    """Random groups of every shape (stuck, growing, catching up, swinging, resets): each status allows only its own
    sentences."""
    rng = random.Random(seed)
    partitions = rng.randrange(1, 5)
    committed = [rng.randrange(0, 1000) for _ in range(partitions)]
    ends = [c + rng.randrange(0, 200) for c in committed]
    consume, produce = rng.choice((0, 3, 10, 30)), rng.choice((0, 5, 10, 20))
    history = []
    for _ in range(rng.randrange(3, SIZE + 1)):
        ends = [e + rng.randrange(0, produce + 1) for e in ends]
        committed = [min(e, c + rng.randrange(0, consume + 1)) for c, e in zip(committed, ends)]
        if rng.random() < 0.05:
            committed = [max(0, c - 50) for c in committed]  # a reset back
        history.append({f"t-{p}": (committed[p], ends[p]) for p in range(partitions)})
    window = window_of(history)
    members = rng.random() < 0.7
    verdict = verdicts_of(window, members=members, last_commit=None)
    trend = judge_trend(verdict.status, LagSeries.from_window(window))
    allowed = {OK: OK_KINDS | {REWOUND}, "": OK_KINDS | {REWOUND, RISING}, WARN: {FALLING_BEHIND, REWOUND},
               ERR: {NOT_CONSUMING, REWOUND}, STOP: {NOT_CONSUMING, REWOUND}}[verdict.status]
    assert trend is None or trend.kind in allowed, (verdict, trend)


def test_catching_up_gives_an_estimate_from_the_rates():
    # 100 consumed and 50 produced every 30 s: 3.3/s against 1.7/s, so the 500 left take 500 / (5/3) s = 5 min
    lags = [1000 - 50 * i for i in range(11)]
    series = LagSeries(times=tuple(STEP * i for i in range(11)), lags=tuple(lags),
                       committed=tuple(100 * i for i in range(11)), ends=tuple(1000 + 50 * i for i in range(11)))
    trend = judge_trend(OK, series)
    assert trend.kind == CATCHING_UP and trend.catch_up_s == pytest.approx(300)
    assert "consuming 3.3 records/s, producing 1.7 records/s" in trend.text and "gone in about 5 min" in trend.text


def test_a_stopped_group_is_not_consuming_and_a_growing_one_falls_behind():
    stuck = LagSeries(times=(0.0, 30.0, 60.0), lags=(10, 20, 30), committed=(5, 5, 5), ends=(15, 25, 35))
    assert judge_trend(STOP, stuck).kind == NOT_CONSUMING and "did not move" in judge_trend(STOP, stuck).text
    assert judge_trend(WARN, stuck).kind == FALLING_BEHIND and "grew from 10 to 30" in judge_trend(WARN, stuck).text
    assert judge_trend("", stuck).kind == RISING


def test_after_a_reset_only_the_samples_since_count():
    series = LagSeries(times=(0.0, 30.0, 60.0), lags=(0, 0, 160), committed=(200, 210, 50), ends=(200, 210, 210))
    trend = judge_trend("", series)
    assert trend.kind == REWOUND and "160" in trend.text and trend.consume_per_s is None
    caught_up = LagSeries(times=(0.0, 30.0, 60.0), lags=(160, 0, 0), committed=(50, 210, 210), ends=(210,) * 3)
    assert judge_trend(OK, caught_up).kind == CAUGHT_UP


def test_series_from_a_window_leaves_out_samples_a_partition_missed():
    window = window_of([{"a-0": (1, 5)}, {"a-0": (2, 6), "a-1": (0, 3)}, {"a-0": (3, 7), "a-1": (1, 3)}])
    series = LagSeries.from_window(window)
    assert series.lags == (7, 6) and series.committed == (2, 4) and series.ends == (9, 10)
    assert judge_trend(OK, LagSeries((), (), (), ())) is None
