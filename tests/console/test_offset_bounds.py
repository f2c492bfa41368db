"""Resets and replays speak of the same bounds (console/offset_bounds.py): the same types, and one rule for a time
no record reaches."""

from hypothesis import given
from hypothesis import strategies as st

from console import offset_bounds
from offsets.resets import strategies
from sparkjobs import bounds


def test_resets_and_replays_share_the_log_start_and_end():
    assert strategies.ToEarliest is bounds.Earliest is offset_bounds.Earliest
    assert strategies.ToLatest is bounds.Latest is offset_bounds.Latest
    assert bounds.parse_start("earliest") == strategies.ToEarliest()
    assert bounds.parse_end("latest") == strategies.ToLatest()
    assert strategies.describe_strategy(bounds.parse_start("earliest")) == "--to-earliest"


@given(found=st.integers(min_value=0, max_value=2 ** 63 - 1), log_end=st.integers(min_value=0, max_value=2 ** 63 - 1))
def test_a_time_no_record_reaches_means_the_log_end(found, log_end):
    assert offset_bounds.at_time_or_log_end(found, log_end) == found
    assert offset_bounds.at_time_or_log_end(offset_bounds.NO_RECORD_AT_TIME, log_end) == log_end
