"""WindowBatch (offsets/lag/window_batch.py) must append, judge and total exactly as LagWindow and status.py do,
group by group, for any histories: the arrays are a speed-up, never a second set of rules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from offsets.lag.status import group_verdict
from offsets.lag.window import LagWindow
from offsets.lag.window_batch import WindowBatch

KEYS = st.sampled_from(["orders-0", "orders-1", "a.b_c-12", "x-0"])


@st.composite
def histories(draw) -> list[dict]:
    """Samples of a few partitions as a consumer makes them: the committed offset stays, moves on, or is reset
    backwards; the log end only grows; the last stable offset is the end, held at the committed offset by an open
    transaction, or unknown; now and then a partition is not in a sample."""
    keys = draw(st.lists(KEYS, min_size=1, max_size=3, unique=True))
    state = {key: [draw(st.integers(0, 5)), draw(st.integers(0, 10))] for key in keys}
    samples = []
    for _ in range(draw(st.integers(0, 12))):
        observed = {}
        for key in keys:
            committed, end = state[key]
            end += draw(st.sampled_from([0, 0, 1, 5]))
            committed = draw(st.sampled_from([committed, committed, min(end, committed + 3), end, max(0, committed - 4)]))
            state[key] = [committed, end]
            if draw(st.integers(0, 9)) == 0:
                continue
            stable = draw(st.sampled_from([end, committed, None]))
            observed[key] = (committed, end) if draw(st.booleans()) and stable is None else (committed, end, stable)
        samples.append(observed)
    return samples


GROUP = st.tuples(histories(), st.booleans(), st.one_of(st.none(), st.floats(min_value=0, max_value=1400)),
                  st.integers(min_value=0, max_value=3))


def history_window(history: list[dict], size: int, skipped_every: int) -> LagWindow:
    """A group's stored window: sampled every 30 s, but for sweeps it was skipped in (its times have gaps)."""
    window = LagWindow()
    for i, observed in enumerate(history):
        if skipped_every and i % (skipped_every + 1) == skipped_every:
            continue
        window = window.append(100.0 + 30 * i, observed, size)
    return window


@settings(max_examples=400, deadline=None)
@given(st.lists(GROUP, min_size=1, max_size=6), st.integers(min_value=1, max_value=10),
       st.integers(min_value=1, max_value=10))
def test_a_batch_appends_judges_and_totals_each_group_as_its_own_window_would(groups, stored_size, size):
    now = 100.0 + 30 * 13
    # The newest sample of each history is what the sweep observes now; the rest is what was stored before.
    windows = [history_window(history[:-1], stored_size, skipped) for history, _, _, skipped in groups]
    observed = [history[-1] if history else {} for history, _, _, _ in groups]
    batch = WindowBatch([w.to_bytes() for w in windows], size)
    batch.append(now, observed)
    verdicts = batch.verdicts([members for _, members, _, _ in groups], [last for _, _, last, _ in groups], now)
    totals = batch.totals()
    blobs = batch.blobs()
    for g, (window, (_, members, last, _)) in enumerate(zip(windows, groups)):
        expected = window.append(now, observed[g], size)
        assert LagWindow.from_bytes(blobs[g]).as_dict() == expected.as_dict()
        assert verdicts[g] == group_verdict(expected, has_members=members, last_commit_s=last, now_s=now)
        assert totals[g] == expected.totals()


def test_groups_with_nothing_stored_and_nothing_committed():
    batch = WindowBatch([None, b"", None], 10)
    batch.append(1000.0, [{}, {"t-0": (1, 5, 5)}, {}])
    assert [v.reason for v in batch.verdicts([True] * 3, [None] * 3, 1000.0)] == [
        "no committed offsets", "collecting samples", "no committed offsets"]
    assert batch.totals() == [[None], [4], [None]]
    assert batch.window(1).as_dict() == {"times": [1000.0], "partitions": {"t-0": [[1, 5, 5]]}}
