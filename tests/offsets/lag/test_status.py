import pytest

from offsets.lag.status import (
    ERR,
    MIN_SAMPLES,
    OK,
    STOP,
    WARN,
    group_verdict,
    partition_verdict,
)
from offsets.lag.window import LagWindow

NOW = 10_000.0


def points(*pairs, step=30.0):
    """(committed, end) pairs → (time, committed, end), one every `step` seconds ending at NOW."""
    start = NOW - step * (len(pairs) - 1)
    return [(start + i * step, c, e) for i, (c, e) in enumerate(pairs)]


def verdict(pairs, members=True, last_commit=None):
    return partition_verdict("orders-3", points(*pairs), has_members=members, last_commit_s=last_commit, now_s=NOW)


def test_too_few_samples_give_no_verdict():
    assert verdict([(0, 10)] * (MIN_SAMPLES - 1)) is None


def test_lag_touching_zero_is_ok_even_if_it_grows_afterwards():
    assert verdict([(10, 10), (10, 20), (12, 40)]).status == OK


def test_consuming_with_shrinking_lag_is_ok():
    assert verdict([(0, 100), (50, 120), (100, 130)]).status == OK


def test_committing_but_lag_growing_every_interval_is_warn():
    v = verdict([(0, 100), (10, 150), (20, 200), (30, 260)])
    assert v.status == WARN
    assert "grew from 100 to 230" in v.reason


def test_lag_that_went_down_once_is_not_warn():
    assert verdict([(0, 100), (10, 150), (100, 160), (110, 260)]).status == OK


def test_no_progress_with_members_is_err():
    v = verdict([(5, 50), (5, 60), (5, 70)])
    assert v.status == ERR
    assert "committed offset 5 has not moved" in v.reason and "lag 65" in v.reason


def test_no_progress_without_members_is_stop():
    v = verdict([(5, 50), (5, 50), (5, 50)], members=False)
    assert v.status == STOP and "no members" in v.reason


def test_no_progress_with_members_but_no_commit_for_longer_than_the_window_is_stop():
    v = verdict([(5, 50), (5, 50), (5, 50)], members=True, last_commit=NOW - 3600)
    assert v.status == STOP and "no commit for 60 min" in v.reason


def test_recent_commits_of_the_same_offset_are_err_not_stop():
    assert verdict([(5, 50), (5, 50), (5, 50)], members=True, last_commit=NOW - 5).status == ERR


def test_a_group_without_members_that_still_commits_the_same_offset_is_err():
    # assign()-only consumers (Spark, Flink) never join, so only commit times tell they are alive
    assert verdict([(5, 50), (5, 50), (5, 50)], members=False, last_commit=NOW - 5).status == ERR


def test_a_reset_backwards_restarts_the_window():
    # Committed went 90 → 10 (a reset to earlier); before it the partition was stalled, after it there are too few
    assert verdict([(90, 100), (90, 100), (90, 100), (10, 100), (20, 100)]) is None
    assert verdict([(90, 100), (90, 100), (10, 100), (20, 100), (30, 100)]).status == OK


def window_of(*samples, size=10):
    window = LagWindow()
    for i, observed in enumerate(samples):
        window = window.append(NOW - 30 * (len(samples) - 1 - i), observed, size)
    return window


def test_window_keeps_the_newest_samples_and_aligns_partitions_that_appear_late():
    window = window_of({"a-0": (1, 2)}, {"a-0": (2, 3)}, {"a-0": (3, 4), "a-1": (0, 9)}, size=2)
    assert window.as_dict() == {"times": [NOW - 30, NOW], "partitions": {"a-0": [[2, 3], [3, 4]], "a-1": [None, [0, 9]]}}


def test_partitions_missing_from_the_whole_window_are_dropped():
    window = window_of({"a-0": (1, 2)}, {}, {}, size=2)
    assert window.as_dict()["partitions"] == {}


def test_group_takes_the_worst_partition_and_names_the_others():
    window = window_of({"a-0": (0, 10), "a-1": (5, 50), "a-2": (0, 5)},
                       {"a-0": (10, 20), "a-1": (5, 60), "a-2": (1, 10)},
                       {"a-0": (20, 20), "a-1": (5, 70), "a-2": (2, 15)})
    v = group_verdict(window, has_members=True, last_commit_s=None, now_s=NOW)
    assert v.status == ERR and v.reason.startswith("a-1: committed offset 5")
    assert v.reason.endswith("(also not OK: a-2)")
    assert v.partitions == {"a-1": ERR, "a-2": WARN}


def test_group_all_ok():
    window = window_of({"a-0": (0, 0)}, {"a-0": (1, 1)}, {"a-0": (2, 2)})
    v = group_verdict(window, has_members=True, last_commit_s=None, now_s=NOW)
    assert (v.status, v.partitions) == (OK, {})


def test_group_collecting_and_group_without_commits():
    assert group_verdict(window_of({"a-0": (0, 4)}), has_members=True, last_commit_s=None, now_s=NOW).status == ""
    empty = group_verdict(window_of({}, {}, {}), has_members=True, last_commit_s=None, now_s=NOW)
    assert (empty.status, empty.reason) == ("", "no committed offsets")


def test_window_totals_sum_partitions_per_sample():
    window = window_of({"a-0": (0, 4)}, {"a-0": (2, 4), "a-1": (1, 9)}, {})
    assert window.totals() == [4, 10, None]


def blocked_points(*triples, step=30.0):
    """(committed, end, last stable offset) triples, one every `step` seconds ending at NOW."""
    start = NOW - step * (len(triples) - 1)
    return [(start + i * step, c, e, s) for i, (c, e, s) in enumerate(triples)]


def test_a_reader_waiting_at_the_last_stable_offset_is_blocked_not_stalled():
    from offsets.lag.status import BLOCKED

    v = partition_verdict("orders-3", blocked_points((40, 45, 40), (40, 70, 40), (40, 90, 40)), has_members=True,
                          last_commit_s=None, now_s=NOW)
    assert v.status == BLOCKED and "last stable offset 40 behind an open transaction (50 offsets held back)" in v.reason
    # The same figures without a last stable offset (older samples) are a stalled consumer.
    assert verdict([(40, 45), (40, 70), (40, 90)]).status == ERR


def test_a_reader_passing_the_last_stable_offset_is_not_blocked():
    v = partition_verdict("orders-3", blocked_points((10, 100, 40), (40, 110, 40), (60, 120, 40)), has_members=True,
                          last_commit_s=None, now_s=NOW)
    assert v.status == OK


def test_a_blocked_partition_is_worse_than_warn_and_better_than_a_stall():
    from offsets.lag.status import BLOCKED

    window = LagWindow()
    for i, sample in enumerate([{"a-0": (40, 50, 40), "a-1": (0, 100, 100), "a-2": (0, 100, 100)},
                                {"a-0": (40, 60, 40), "a-1": (10, 150, 150), "a-2": (0, 110, 110)},
                                {"a-0": (40, 70, 40), "a-1": (20, 200, 200), "a-2": (0, 120, 120)}]):
        window = window.append(NOW - 30 * (2 - i), sample, 10)
    verdict_now = group_verdict(window, has_members=True, last_commit_s=None, now_s=NOW)
    assert verdict_now.status == ERR and verdict_now.partitions == {"a-0": BLOCKED, "a-1": WARN, "a-2": ERR}


# Burrow's rules (its caching evaluator, v1.9.5) over commit histories, one sample per commit as a console sweep
# would see them: (committed, log end) every 30 s ending at NOW, the group's last commit at the last point unless
# said. Each row says Burrow's partition verdict and the console's; docs/on-call/lag-and-history.md ("The console's
# status and Burrow's") explains each difference. tests/offsets/lag/test_burrow_parity.py checks the same against
# a running Burrow.
BURROW_NAMES = {"OK": OK, "WARN": WARN, "STALL": ERR, "STOP": STOP}  # the same rule under the console's name
BURROW_DIFFERENCES = {("WARN", OK), ("REWIND", OK)}  # a lag that did not grow; a reset
BURROW_SCENARIOS = [
    # name, history, seconds since the last commit, Burrow, console
    ("current lag zero", [(0, 50), (5, 50), (50, 50)], 0, "OK", OK),
    ("lag zero earlier in the window", [(10, 10), (10, 30), (12, 40)], 0, "OK", OK),
    ("lag zero earlier, then committing the same offset", [(10, 10), (10, 30), (10, 40)], 0, "OK", OK),
    ("catching up", [(0, 100), (30, 110), (60, 120), (90, 130)], 0, "OK", OK),
    ("lag went down once, grew otherwise", [(0, 100), (10, 150), (100, 160), (110, 260)], 0, "OK", OK),
    ("falling behind", [(0, 100), (10, 150), (20, 200), (30, 260)], 0, "WARN", WARN),
    ("keeping pace with a fixed backlog", [(0, 20), (5, 25), (10, 30), (15, 35)], 0, "WARN", OK),
    ("committing the same offset with lag", [(5, 50), (5, 60), (5, 70)], 0, "STALL", ERR),
    ("committing the same offset, nothing new produced", [(5, 50), (5, 50), (5, 50)], 0, "STALL", ERR),
    ("stopped, silent for longer than it committed", [(0, 40), (10, 50), (20, 60), (20, 70), (20, 80), (20, 90)],
     100, "STOP", STOP),
    ("stopped a moment ago", [(0, 40), (10, 50), (20, 60), (30, 70), (30, 80)], 20, "WARN", WARN),
    ("committed the same offset, then stopped committing", [(5, 50)] * 6, 100, "STOP", STOP),
    ("reset backwards and consuming since", [(80, 100), (90, 100), (10, 101), (12, 102), (14, 103)], 0, "REWIND",
     OK),
    ("reset backwards and past the old offset again", [(80, 200), (40, 201), (60, 202), (80, 203), (100, 204)], 0,
     "OK", OK),
]


@pytest.mark.parametrize("history, idle_s, burrow, console", [s[1:] for s in BURROW_SCENARIOS],
                         ids=[s[0] for s in BURROW_SCENARIOS])
def test_burrows_scenarios(history, idle_s, burrow, console):
    assert verdict(history, members=False, last_commit=NOW - idle_s).status == console
    assert (burrow, console) in BURROW_DIFFERENCES or console == BURROW_NAMES[burrow]


def test_a_reset_is_not_held_against_the_group_as_burrows_rewind_is():
    # Burrow: REWIND (group ERR) until the commit before the reset leaves its window or the group passes it again.
    # The console restarts the window at the reset: a reset made on purpose says nothing bad about the consumer.
    assert verdict([(80, 100), (90, 100), (10, 100)]) is None  # one point since the reset: collecting again
    assert verdict([(90, 100), (10, 100), (10, 100), (10, 100)], members=False, last_commit=NOW - 5).status == ERR


def test_fewer_commits_than_burrow_needs_for_a_full_window_still_get_a_verdict_from_three():
    # Burrow judges from the first commit (one commit with lag and a second of silence is STOP there, its window
    # spanning no time); the console waits for MIN_SAMPLES points, so one slow sweep cannot say STOP.
    assert verdict([(5, 50), (5, 50)], members=False, last_commit=NOW - 60) is None
    assert verdict([(5, 50), (5, 50), (5, 50)], members=False, last_commit=NOW - 90).status == STOP


def test_a_group_that_stopped_part_way_through_the_window_is_stop_once_silent_longer_than_it_committed():
    # It was catching up, then its consumers died: before, the lag that went down early in the window kept it OK
    # ("consuming") until a whole window of samples had the same committed offset.
    dead = [(0, 100), (30, 110), (60, 120), (60, 130), (60, 140), (60, 150)]
    v = verdict(dead, members=False, last_commit=NOW - 100)
    assert v.status == STOP and "no commit for 2 min" in v.reason
    # Silent for 40 s after committing for 110 s: not yet (Burrow's rule: silent longer than its window of commits)
    assert verdict([(0, 100), (30, 110), (60, 120), (90, 130), (90, 140)], last_commit=NOW - 40).status == OK


def test_a_recorder_that_is_behind_cannot_make_a_committing_group_stop():
    # The committed offset moved at the newest sample, so a commit came after the one before it, whatever the
    # recorder's last commit time says.
    assert verdict([(0, 100), (10, 150), (20, 200), (30, 260)], last_commit=NOW - 3600).status == WARN
