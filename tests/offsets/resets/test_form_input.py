"""The wizard's inputs as the shell's values: checked against the planner's own reading of Kafka's formats."""

from datetime import UTC, datetime

import pytest

from offsets.resets.form_input import (
    MSG_BAD_LOCAL_TIME,
    MSG_BAD_PARTITION_CHOICE,
    MSG_CSV_NOT_TEXT,
    MSG_NOTHING_CHOSEN,
    MSG_UNKNOWN_ZONE,
    InputError,
    csv_from_upload,
    datetime_value,
    duration_value,
    minutes_ago_value,
    scope_from_choices,
    time_zones,
)
from offsets.resets.planning import (
    INVALID_PARTITION,
    TopicScope,
    parse_kafka_datetime,
    parse_kafka_duration,
)


def _ms(*args, tz=UTC) -> int:
    return int(datetime(*args, tzinfo=tz).timestamp() * 1000)


@pytest.mark.parametrize(("local", "zone", "text", "utc"), [
    ("2026-01-31T08:00", "Europe/Oslo", "2026-01-31T08:00:00.000+01:00", (2026, 1, 31, 7, 0)),
    ("2026-07-31T08:00:05", "Europe/Oslo", "2026-07-31T08:00:05.000+02:00", (2026, 7, 31, 6, 0, 5)),
    ("2026-01-31T08:00:00.25", "UTC", "2026-01-31T08:00:00.250Z", (2026, 1, 31, 8, 0, 0, 250_000)),
    ("2026-01-31T08:00", "", "2026-01-31T08:00:00.000Z", (2026, 1, 31, 8, 0)),
    ("2026-01-31T08:00", "Asia/Kolkata", "2026-01-31T08:00:00.000+05:30", (2026, 1, 31, 2, 30)),
    ("2026-01-31T08:00", "America/St_Johns", "2026-01-31T08:00:00.000-03:30", (2026, 1, 31, 11, 30)),
])
def test_a_local_time_in_a_zone_becomes_the_text_kafka_reads_as_that_instant(local, zone, text, utc):
    assert datetime_value(local, zone) == text
    assert parse_kafka_datetime(text) == _ms(*utc)


def test_a_zone_offset_with_seconds_is_said_in_utc():
    text = datetime_value("1880-06-01T12:00", "Europe/Dublin")  # Dublin mean time: -00:25:21
    assert text.endswith("Z") and parse_kafka_datetime(text) == _ms(1880, 6, 1, 12, 25, 21)


@pytest.mark.parametrize(("local", "zone", "words"), [
    ("2026-03-29T02:30", "Europe/Oslo", "does not exist in Europe/Oslo"),  # spring forward
    ("2026-10-25T02:30", "Europe/Oslo", "happens twice in Europe/Oslo"),  # fall back
    ("yesterday", "UTC", MSG_BAD_LOCAL_TIME.format(value="yesterday")),
    ("2026-02-30T01:00", "UTC", MSG_BAD_LOCAL_TIME.format(value="2026-02-30T01:00")),
    ("2026-01-01T00:00", "../../etc/passwd", MSG_UNKNOWN_ZONE.format(zone="../../etc/passwd")),
    ("2026-01-01T00:00", "Mars/Olympus", MSG_UNKNOWN_ZONE.format(zone="Mars/Olympus")),
])
def test_times_that_are_not_one_instant_are_refused(local, zone, words):
    with pytest.raises(InputError) as refused:
        datetime_value(local, zone)
    assert words in refused.value.message


def test_the_ambiguous_hour_names_both_readings_in_utc():
    with pytest.raises(InputError) as refused:
        datetime_value("2026-10-25T02:30", "Europe/Oslo")
    assert "2026-10-25T00:30:00.000Z or 2026-10-25T01:30:00.000Z" in refused.value.message


def test_minutes_ago_is_fixed_to_utc_at_the_time_given():
    now = datetime(2026, 1, 1, 0, 10, 30, 123_456, tzinfo=UTC)
    assert minutes_ago_value(90, now) == "2025-12-31T22:40:30.123Z"
    assert parse_kafka_datetime(minutes_ago_value(0, now)) == _ms(2026, 1, 1, 0, 10, 30, 123_000)


@pytest.mark.parametrize(("amount", "unit", "text", "ms"), [
    (2, "hours", "PT2H", 7_200_000), (45, "minutes", "PT45M", 2_700_000), (3, "days", "P3D", 259_200_000),
    (0, "minutes", "PT0M", 0),
])
def test_durations_become_iso_8601_as_by_duration_takes_them(amount, unit, text, ms):
    assert duration_value(amount, unit) == text and parse_kafka_duration(text) == ms


def test_an_unknown_unit_is_refused():
    with pytest.raises(InputError, match="fortnights"):
        duration_value(1, "fortnights")


def test_ticked_topics_partitions_and_typed_topics_merge_into_one_scope_per_topic():
    scope = scope_from_choices(["a"], ["a:1", "b:2", "b:0", "c.x_y-z:3"], "d  b:5\ne:1,2")
    assert scope == [TopicScope("a"), TopicScope("b", (0, 2, 5)), TopicScope("c.x_y-z", (3,)), TopicScope("d"),
                     TopicScope("e", (1, 2))]


@pytest.mark.parametrize(("topics", "partitions", "other", "message"), [
    ([], [], "  ", MSG_NOTHING_CHOSEN),
    ([], ["a"], "", MSG_BAD_PARTITION_CHOICE.format(value="a")),
    ([], ["a:-1"], "", MSG_BAD_PARTITION_CHOICE.format(value="a:-1")),
    ([], ["a b:1"], "", MSG_BAD_PARTITION_CHOICE.format(value="a b:1")),
    ([], [], "a:x", INVALID_PARTITION.format(partition="x", arg="a:x")),
])
def test_scope_input_that_names_no_partition_is_refused(topics, partitions, other, message):
    with pytest.raises(InputError) as refused:
        scope_from_choices(topics, partitions, other)
    assert refused.value.message == message


def test_uploaded_csv_is_text_without_a_byte_order_mark():
    assert csv_from_upload("\ufefft,0,5\n".encode()) == "t,0,5\n"
    with pytest.raises(InputError) as refused:
        csv_from_upload(b"t,0,\xff\n")
    assert refused.value.message == MSG_CSV_NOT_TEXT


def test_time_zones_start_with_utc_and_hold_iana_names():
    zones = time_zones()
    assert zones[0] == "UTC" and "Europe/Oslo" in zones and zones.count("UTC") == 1
