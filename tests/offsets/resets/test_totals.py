"""Totals per topic above the per-partition preview."""

from gateway.kafka.types import PartitionRef
from offsets.resets.planning import FromFile, ToEarliest, plan_reset
from offsets.resets.totals import TopicTotals, plan_totals


def _ref(topic, partition):
    return PartitionRef(topic, partition)


def test_totals_count_records_reread_and_skipped_per_topic():
    refs = [_ref("a", 0), _ref("a", 1), _ref("b", 0), _ref("b", 1)]
    # a-0 moves 8 -> 3 (5 re-read), a-1 has no commit, b-0 moves 2 -> 40 (38 skipped), b-1 stays
    csv = "a,0,3\nb,0,40\nb,1,7\na,1,0\n"
    plan = plan_reset(group="g", partitions=refs, strategy=FromFile(csv),
                      committed={_ref("a", 0): 8, _ref("b", 0): 2, _ref("b", 1): 7},
                      log_start={r: 0 for r in refs}, log_end={r: 50 for r in refs}, now_ms=0)

    # lag now: a-0 42 (a-1 has no commit); b-0 48 + b-1 43. After: a-0 47 + a-1 50; b-0 10 + b-1 43.
    assert plan_totals(plan) == [TopicTotals("a", partitions=2, reread=5, skipped=0, unknown=1, lag_now=42,
                                             lag_after=97),
                                 TopicTotals("b", partitions=2, reread=0, skipped=38, unknown=0, lag_now=91,
                                             lag_after=53)]


def test_only_records_still_in_the_log_count():
    ref = _ref("t", 0)
    # committed 8, log starts at 3 after a purge: going to earliest re-reads 3..7, not 0..7
    plan = plan_reset(group="g", partitions=[ref], strategy=ToEarliest(), committed={ref: 8},
                      log_start={ref: 3}, log_end={ref: 20}, now_ms=0)
    assert plan_totals(plan) == [TopicTotals("t", partitions=1, reread=5, skipped=0, unknown=0, lag_now=12,
                                             lag_after=17)]


def test_an_empty_plan_has_no_totals():
    plan = plan_reset(group="g", partitions=[], strategy=ToEarliest(), committed={}, log_start={}, log_end={},
                      now_ms=0)
    assert plan_totals(plan) == []
