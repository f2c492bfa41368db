"""The one reader of typed times and durations (console/times.py): replays' ISO 8601 bounds and resets' Kafka-tool
grammar give the same milliseconds wherever both read a text, and each keeps what its callers relied on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.times import (
    EPOCH, INVALID_DURATION, NO_T_IN_DATETIME, NOT_ISO_8601, TimeTextError, parse_duration_ms, parse_time_ms,
)

zones = st.one_of(st.none(), st.just(UTC), st.builds(
    lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-23 * 60 - 59, 23 * 60 + 59)))
moments = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=zones)


def exact_ms(moment: datetime) -> int:
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return (aware - EPOCH) // timedelta(milliseconds=1)


@given(moments, st.sampled_from(["T", " "]))
def test_any_iso_form_python_writes_is_read_to_the_exact_millisecond(moment, sep):
    assert parse_time_ms(f"  {moment.isoformat(sep=sep)} ") == exact_ms(moment)


@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)))
def test_replays_read_whole_seconds_as_they_did_before_the_parser_was_shared(moment):
    # The replay bounds' former reading: fromisoformat, then float seconds times 1000, truncated.
    text = moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")
    assert parse_time_ms(text) == int(datetime.fromisoformat(text).timestamp() * 1000)


@pytest.mark.parametrize(("text", "ms"), [("2246-11-10T13:49:28.418Z", 8736817768418),
                                          ("2106-11-09T05:37:34.230Z", 4318724254230),
                                          ("1969-12-31T23:59:59.9995Z", -1)])
def test_fractions_of_a_second_are_counted_exactly(text, ms):
    # The former float reading gave one millisecond less for the first two, and 0 for the last.
    assert parse_time_ms(text) == ms


def kafka_text(moment: datetime, zone: str) -> str:
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}{zone}"


@given(st.datetimes(min_value=datetime(1000, 1, 2), max_value=datetime(9999, 12, 30)),
       st.integers(-23, 23), st.integers(0, 59), st.sampled_from(["", "Z", "hh", "hh:mm", "hhmm0"]))
def test_where_both_grammars_read_a_time_they_agree(moment, hours, minutes, form):
    sign = "-" if hours < 0 else "+"
    zone = {"": "", "Z": "Z", "hh": f"{sign}{abs(hours):02d}", "hh:mm": f"{sign}{abs(hours):02d}:{minutes:02d}",
            "hhmm0": f"{sign}{abs(hours):02d}00"}[form]
    text = kafka_text(moment, zone)
    assert parse_time_ms(text, as_kafka_tool=True) == parse_time_ms(text)


def java_split_parts(text: str, sep: str) -> int:
    """How many parts Java's String.split leaves: trailing empty strings are dropped."""
    if sep not in text:
        return 1
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return len(parts)


@given(st.text(alphabet="2T0-:.x", max_size=12))
def test_the_kafka_grammar_asks_for_a_t_exactly_when_kafkas_split_finds_none(text):
    try:
        parse_time_ms(text, as_kafka_tool=True)
        refused_for_t = False
    except TimeTextError as error:
        refused_for_t = error.message == NO_T_IN_DATETIME
    assert refused_for_t == (java_split_parts(text.strip(), "T") < 2)


@pytest.mark.parametrize("text", ["2026-11-21T03:00:00+01:00", "2026-11-21", "2026-11-21T03:00Z"])
def test_the_kafka_grammar_refuses_what_kafka_would_not_read_but_iso_accepts(text):
    parse_time_ms(text)
    with pytest.raises(TimeTextError):
        parse_time_ms(text, as_kafka_tool=True)


@pytest.mark.parametrize("text", ["", "yesterday", "2026-13-01", "2026-11-21T25:00"])
def test_unreadable_iso_times_say_how_to_write_one(text):
    with pytest.raises(TimeTextError) as error:
        parse_time_ms(text)
    assert error.value.message == NOT_ISO_8601.format(text=text)


@given(st.integers(-10**6, 10**6), st.integers(-10**4, 10**4), st.integers(-10**5, 10**5), st.integers(0, 999))
def test_durations_add_their_parts_in_milliseconds(hours, minutes, seconds, millis):
    text = f"PT{hours}H{minutes}M{seconds}.{millis:03d}S"
    sign = -1 if seconds < 0 else 1  # Java: the seconds' sign carries over to the fraction
    assert parse_duration_ms(text) == (hours * 3600 + minutes * 60 + seconds) * 1000 + sign * millis
    assert parse_duration_ms("-" + text) == -parse_duration_ms(text)


@pytest.mark.parametrize("text", ["P1W", "PT", "2h"])
def test_durations_outside_javas_grammar_are_refused(text):
    with pytest.raises(TimeTextError) as error:
        parse_duration_ms(text)
    assert error.value.message == INVALID_DURATION.format(text=text)
