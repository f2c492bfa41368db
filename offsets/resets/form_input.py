"""The reset wizard's inputs turned into what the shell takes: a scope of `--topic` arguments and the strategy's
value string (`strategy_input.strategy_from` stays the one place that makes planner objects of them).

Pure: no Django, no Kafka, no clock (callers pass "now").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from offsets.resets.planning import PlanError, TopicScope, parse_topic_scope

MSG_NOTHING_CHOSEN = "Tick at least one topic or partition, name another topic, or reset all topics."
MSG_ALL_AND_CHOSEN = ("The scope says all topics, but topics or partitions are ticked too: untick them, or choose "
                      "the ticked topics and partitions as the scope.")
MSG_BAD_PARTITION_CHOICE = "'{value}' is not a topic:partition choice."
MSG_BAD_LOCAL_TIME = "'{value}' is not a date and time (expected 2026-01-31T08:00, seconds optional)."
MSG_UNKNOWN_ZONE = "'{zone}' is not a time zone: use an IANA name such as Europe/Oslo, or UTC."
MSG_TIME_SKIPPED = ("{local} does not exist in {zone}: the clocks skipped that hour. Pick a time outside the gap, "
                    "or give it in UTC.")
MSG_TIME_TWICE = ("{local} happens twice in {zone} (the clocks went back), so it is ambiguous. Give it in UTC "
                  "({first} or {second}).")
MSG_TIME_OR_AGO = "Give either a date-time or a number of minutes ago, not both."
MSG_NEEDS_TIME = "Give the date-time to reset to, or how many minutes ago."
MSG_NEEDS_DURATION = "Give how long ago: a number and a unit."
MSG_BAD_UNIT = "'{unit}' is not a unit of duration (minutes, hours or days)."
MSG_NEEDS_OFFSET = "Give the offset to reset every chosen partition to."
MSG_NEEDS_SHIFT = "Give the number of offsets to shift by (negative to re-read)."
MSG_NEEDS_GROUP = "Name the group whose committed offsets to copy."
MSG_NEEDS_CSV = "Upload a CSV plan or paste it: topic,partition,offset lines."
MSG_CSV_NOT_TEXT = "The uploaded plan is not UTF-8 text."

# Kafka's own limit on topic names (Topic.validate): letters, digits, '.', '_' and '-'.
TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")
DURATION_UNITS = {"minutes": "PT{n}M", "hours": "PT{n}H", "days": "P{n}D"}
_LOCAL_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?", re.ASCII)


class InputError(ValueError):
    """Input the wizard cannot turn into a reset, with a message for the person who typed it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ---- Scope ---------------------------------------------------------------------------------------------------


def partition_choice(value: str) -> tuple[str, int]:
    """A "topic:partition" checkbox value. Topic names cannot hold ':', so the last one separates."""
    topic, _, number = value.rpartition(":")
    if not TOPIC_NAME.fullmatch(topic) or not number.isdigit():
        raise InputError(MSG_BAD_PARTITION_CHOICE.format(value=value))
    return topic, int(number)


def scope_from_choices(topics: Iterable[str], partitions: Iterable[str], other: str = "") -> list[TopicScope]:
    """Whole topics, "topic:partition" picks and free `--topic` arguments (one per line or space apart) merged into
    one scope per topic, sorted; a whole topic wins over picks of its partitions."""
    whole: set[str] = set(topics)
    picked: dict[str, set[int]] = {}
    for value in partitions:
        topic, number = partition_choice(value)
        picked.setdefault(topic, set()).add(number)
    for arg in other.split():
        try:
            scope = parse_topic_scope(arg)
        except PlanError as exc:
            raise InputError(exc.message) from exc
        if scope.partitions is None:
            whole.add(scope.topic)
        else:
            picked.setdefault(scope.topic, set()).update(scope.partitions)
    if not whole and not picked:
        raise InputError(MSG_NOTHING_CHOSEN)
    return [TopicScope(topic) if topic in whole else TopicScope(topic, tuple(sorted(picked[topic])))
            for topic in sorted(whole | set(picked))]


# ---- Strategy values -----------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def time_zones() -> tuple[str, ...]:
    """The IANA zone names this machine knows (its tz database), UTC first."""
    return ("UTC", *sorted(available_timezones() - {"UTC"}))


def _zone(name: str):
    name = name.strip() or "UTC"
    if name.upper() in ("UTC", "Z"):
        return UTC  # needs no tz database
    if name not in time_zones():  # also keeps path-like names away from ZoneInfo's file lookup
        raise InputError(MSG_UNKNOWN_ZONE.format(zone=name))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(MSG_UNKNOWN_ZONE.format(zone=name)) from None


def _kafka_datetime(moment: datetime) -> str:
    """yyyy-MM-ddTHH:mm:ss.SSS and the zone as +hh:mm (Kafka keeps only the hours of +hhmm), or Z for UTC."""
    text = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    offset = moment.utcoffset() or timedelta(0)
    if not offset:
        return text + "Z"
    if offset.seconds % 60:  # a historic local mean time (+00:53:28) has no hh:mm form: say it in UTC
        return _kafka_datetime(moment.astimezone(UTC))
    sign, offset = ("-", -offset) if offset < timedelta(0) else ("+", offset)
    hours, minutes = divmod(offset.seconds // 60, 60)
    return f"{text}{sign}{hours:02d}:{minutes:02d}"


def datetime_value(local: str, zone: str = "UTC") -> str:
    """A datetime-local input ("2026-01-31T08:00", seconds and fractions optional) read in an IANA zone, as the
    `--to-datetime` text: '2026-01-31T08:00:00.000+01:00'. Wall times the zone skips or repeats are refused."""
    match = _LOCAL_TIME.fullmatch(local.strip())
    if not match:
        raise InputError(MSG_BAD_LOCAL_TIME.format(value=local))
    year, month, day, hour, minute, second, fraction = match.groups()
    try:
        naive = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0),
                         int((fraction or "0").ljust(6, "0")))
    except ValueError:
        raise InputError(MSG_BAD_LOCAL_TIME.format(value=local)) from None
    tz = _zone(zone)
    first, second_reading = naive.replace(tzinfo=tz), naive.replace(tzinfo=tz, fold=1)
    if tz is not UTC:
        shown = naive.strftime("%Y-%m-%d %H:%M")
        if first.astimezone(UTC).astimezone(tz).replace(tzinfo=None) != naive:  # lands elsewhere: a skipped hour
            raise InputError(MSG_TIME_SKIPPED.format(local=shown, zone=zone.strip()))
        if first.utcoffset() != second_reading.utcoffset():
            raise InputError(MSG_TIME_TWICE.format(local=shown, zone=zone.strip(),
                                                   first=_kafka_datetime(first.astimezone(UTC)),
                                                   second=_kafka_datetime(second_reading.astimezone(UTC))))
    return _kafka_datetime(first)


def minutes_ago_value(minutes: int, now: datetime) -> str:
    """"N minutes ago" fixed to a UTC `--to-datetime` text, so the execute step resets to the previewed time."""
    return _kafka_datetime((now - timedelta(minutes=minutes)).astimezone(UTC))


def duration_value(amount: int, unit: str) -> str:
    """A number and a unit as the ISO-8601 duration `--by-duration` takes: (2, "hours") → 'PT2H'."""
    if unit not in DURATION_UNITS:
        raise InputError(MSG_BAD_UNIT.format(unit=unit))
    return DURATION_UNITS[unit].format(n=amount)


def csv_from_upload(data: bytes) -> str:
    """An uploaded plan as text (a byte-order mark from a spreadsheet is dropped)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(MSG_CSV_NOT_TEXT) from None

