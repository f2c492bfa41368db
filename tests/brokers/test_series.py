"""Rates from meter counts and minute averages (brokers/series.py): pure, no servers."""

from __future__ import annotations

import math

from brokers.series import meter_rate, minute_averages, reading_values, summed
from gateway.kafka.types import BrokerJmxReading, MeterReading


def test_a_rate_is_the_counts_difference_over_the_time_between_samples():
    assert meter_rate(MeterReading(1300, 9.0), 1000, 30.0) == 10.0


def test_without_a_sample_before_or_after_a_restart_the_meters_own_rate_stands_in():
    assert meter_rate(MeterReading(50, 2.5), None, None) == 2.5
    assert meter_rate(MeterReading(50, 2.5), 900, 30.0) == 2.5  # the count went back: the broker restarted
    assert meter_rate(MeterReading(50, -1.0), 900, 30.0) == 0.0


def test_a_reading_gives_broker_and_topic_rates_and_the_counts_to_keep():
    reading = BrokerJmxReading(broker=1, address="h:1", read_at=130.0, gauges={"under_replicated": 2.0},
                               meters={"bytes_in": MeterReading(4000, 1.0)},
                               topics={"orders": {"messages_in": MeterReading(70, 0.5)}})
    counts = {"at": 100.0, "broker": {"bytes_in": 1000}, "topics": {"orders": {"messages_in": 10}}}
    broker, topics, kept = reading_values(reading, counts)
    assert broker == {"under_replicated": 2.0, "bytes_in": 100.0}
    assert topics == {"orders": {"messages_in": 2.0}}
    assert kept == {"at": 130.0, "broker": {"bytes_in": 4000}, "topics": {"orders": {"messages_in": 70}}}


def test_a_meter_born_since_the_sample_before_counts_from_zero():
    reading = BrokerJmxReading(broker=1, address="h:1", read_at=110.0,
                               topics={"new": {"messages_in": MeterReading(400, 0.0)}})
    _, topics, _ = reading_values(reading, {"at": 100.0, "broker": {}, "topics": {}})
    assert topics == {"new": {"messages_in": 40.0}}
    _, first, _ = reading_values(reading, {})  # no sample before at all: the meter's own rate
    assert first == {"new": {"messages_in": 0.0}}


def test_minute_averages_average_each_value_over_the_rows_that_have_it():
    rows = [((1, ""), 60.0, {"a": 1.0, "b": 10.0}), ((1, ""), 90.0, {"a": 3.0}), ((1, ""), 121.0, {"a": 7.0}),
            ((2, ""), 61.0, {"a": 100.0, "c": math.nan})]
    assert minute_averages(rows) == {((1, ""), 60): {"a": 2.0, "b": 10.0}, ((1, ""), 120): {"a": 7.0},
                                     ((2, ""), 60): {"a": 100.0}}


def test_summed_adds_every_brokers_share_at_each_time():
    rows = [(1.0, {"x": 2.0}), (1.0, {"x": 3.0}), (2.0, {"x": 1.0}), (2.0, {"y": 9.0})]
    assert summed(rows, "x") == [(1.0, 5.0), (2.0, 1.0)]
