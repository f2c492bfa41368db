"""LagWindow (offsets/lag/window.py): packed columns that must mean exactly what the readable form says."""

from __future__ import annotations

import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from offsets.lag.status import group_verdict, partition_verdict
from offsets.lag.window import LagWindow

KEYS = st.sampled_from(["orders-0", "orders-1", "a.b_c-12", "x-0", "y-7"])
OFFSET = st.integers(min_value=0, max_value=2**62)
POINT = st.one_of(st.tuples(OFFSET, OFFSET), st.tuples(OFFSET, OFFSET, OFFSET), st.tuples(OFFSET, OFFSET, st.none()))
SAMPLES = st.lists(st.dictionaries(KEYS, POINT, max_size=4), max_size=14)


def reference_append(window: dict, time_s: float, observed: dict, size: int) -> dict:
    """The readable form's own rule, point by point: what LagWindow.append must equal."""
    times = window.get("times", [])
    old = window.get("partitions", {})
    partitions = {}
    for key, series in old.items():
        point = observed.get(key)
        series = (series + [None if point is None else list(point)])[-size:]
        if any(v is not None for v in series):
            partitions[key] = series
    padding = min(len(times), size - 1)
    for key, point in observed.items():
        if key not in old:
            partitions[key] = [None] * padding + [list(point)]
    return {"times": (times + [time_s])[-size:], "partitions": partitions}


def readable(partitions: dict) -> dict:
    """Points as LagWindow.as_dict gives them: a stable that is None is left off."""
    return {key: [None if p is None else (p[:2] if len(p) < 3 or p[2] is None else p) for p in series]
            for key, series in partitions.items()}


@settings(max_examples=300, deadline=None)
@given(SAMPLES, st.integers(min_value=1, max_value=10))
def test_append_keeps_what_the_readable_rule_keeps_and_survives_packing(samples, size):
    window, reference = LagWindow(), {}
    for i, observed in enumerate(samples):
        window = window.append(1000.0 + 30 * i, observed, size)
        reference = reference_append(reference, 1000.0 + 30 * i, observed, size)
        assert window.as_dict() == {"times": reference["times"], "partitions": readable(reference["partitions"])}
        assert LagWindow.from_bytes(window.to_bytes()) == LagWindow(window.times, window.keys, list(window.values))
        assert LagWindow.from_dict(window.as_dict()).as_dict() == window.as_dict()


@settings(max_examples=300, deadline=None)
@given(SAMPLES, st.booleans(), st.one_of(st.none(), st.floats(min_value=0, max_value=2000)))
def test_the_group_verdict_is_the_worst_of_the_point_by_point_verdicts(samples, members, last_commit):
    window = LagWindow()
    for i, observed in enumerate(samples):
        window = window.append(1000.0 + 30 * i, observed, 10)
    now = 1000.0 + 30 * len(samples)
    expected = []
    for key, series in window.as_dict()["partitions"].items():
        offset = len(window.times) - len(series)
        points = [(window.times[offset + i], *v) for i, v in enumerate(series) if v is not None]
        verdict = partition_verdict(key, points, has_members=members, last_commit_s=last_commit, now_s=now)
        if verdict is not None:
            expected.append(verdict)
    found = group_verdict(window, has_members=members, last_commit_s=last_commit, now_s=now)
    assert set(found.partitions.items()) == {(v.key, v.status) for v in expected if v.status != "OK"}
    if expected:
        assert found.status == max(expected, key=lambda v: (["", "OK", "WARN", "BLOCKED", "STOP", "ERR"].index(v.status),
                                                            v.lag)).status
    else:
        assert found.status == ""


def test_an_idle_group_packs_small():
    window = LagWindow()
    for i in range(10):
        window = window.append(1000.0 + 30 * i, {f"orders-{p}": (5_000_000, 7_000_000, 7_000_000) for p in range(4)},
                               10)
    assert len(window.to_bytes()) < 250  # 4 partitions x 10 points x 3 offsets would be 960 bytes of int64 alone


def test_nothing_stored_and_a_later_format_read_as_empty_windows():
    assert LagWindow.from_bytes(b"") == LagWindow() == LagWindow.from_bytes(None)
    later = bytearray(zlib.decompress(LagWindow((1.0,), ("a-0",), [1, 2, 3]).to_bytes()))
    later[0] = 99
    assert LagWindow.from_bytes(zlib.compress(bytes(later))) == LagWindow()
