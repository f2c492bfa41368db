"""The reset strategies (`--to-earliest` ... `--from-file`, and the console's from-group and to-recorded), what
each is called in Kafka's options, and the dates and durations they carry, read as Kafka's tool reads them.

Pure: no Django, no Kafka client, no clock (callers pass "now").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

from console.kafka.types import PartitionRef
from offsets.resets.plan_input import JAVA_LONG_MAX, JAVA_LONG_MIN, PlanError, java_split

# Kafka's own text.
NO_T_IN_DATETIME = "Error parsing timestamp. It does not contain a 'T' according to ISO8601 format"

# The console's own texts.
UNPARSEABLE_DATE = ("Unparseable date: \"{text}\"; expected yyyy-MM-ddTHH:mm:ss.SSS, optionally followed by "
                    "Z, +hh, +hhmm or +hh:mm (no zone means UTC)")
MILLISECONDS_REQUIRED = ("Unparseable date: \"{text}\"; the time needs milliseconds with exactly 3 digits, "
                         "as in 2024-01-31T09:30:00.000 (Kafka reads .5 as 5 ms)")
ZONE_MINUTES_DROPPED = ("Unparseable date: \"{text}\"; Kafka reads only the hours of a +hhmm offset, "
                        "so write {zone} as {fixed}")
INVALID_DURATION = "Text cannot be parsed to a Duration: \"{text}\"; expected PnDTnHnMn.nS, e.g. PT30M or P1DT12H"
TIMESTAMP_OUT_OF_RANGE = ("Timestamp {timestamp} ms is out of range: offsets are searched from 0 "
                          "(1970-01-01T00:00:00.000Z) on, and negative values mean latest or earliest to Kafka")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# ---- Strategies ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToEarliest:
    pass


@dataclass(frozen=True)
class ToLatest:
    pass


@dataclass(frozen=True)
class ToCurrent:
    pass


@dataclass(frozen=True)
class ToOffset:
    offset: int


@dataclass(frozen=True)
class ShiftBy:
    delta: int


@dataclass(frozen=True)
class ToDatetime:
    text: str


@dataclass(frozen=True)
class ByDuration:
    text: str


@dataclass(frozen=True)
class FromFile:
    csv_text: str


@dataclass(frozen=True)
class FromGroup:
    """Console only: another group's committed offsets, for the partitions in scope that it has."""

    offsets: dict[PartitionRef, int]
    source_group: str = ""


@dataclass(frozen=True)
class ToRecorded:
    """Console only: an audit event's "before" offsets, to revert a reset. None for a partition that had no
    committed offset before: reverting deletes the one the reset committed there."""

    offsets: dict[PartitionRef, int | None]


Strategy = (ToEarliest | ToLatest | ToCurrent | ToOffset | ShiftBy | ToDatetime | ByDuration | FromFile | FromGroup
            | ToRecorded)
_BARE_OPTIONS = {ToEarliest: "--to-earliest", ToLatest: "--to-latest", ToCurrent: "--to-current"}


def describe_strategy(strategy: Strategy) -> str:
    """The Kafka option the strategy stands for (or the console's own name), for audit rows and the UI."""
    match strategy:
        case ToOffset(offset):
            return f"--to-offset {offset}"
        case ShiftBy(delta):
            return f"--shift-by {delta}"
        case ToDatetime(text):
            return f"--to-datetime {text}"
        case ByDuration(text):
            return f"--by-duration {text}"
        case FromGroup(_, source_group):
            return f"from group {source_group}".rstrip()
        case ToRecorded():
            return "to recorded offsets"
        case FromFile():
            return "--from-file"
        case _:
            return _BARE_OPTIONS[type(strategy)]


# ---- Dates and durations -------------------------------------------------------------------------------------

_DATETIME = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})T(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d+))?(.*)", re.ASCII)
_ZONE = re.compile(r"Z|(?P<sign>[+-])(?P<hh>\d{2})(?::?(?P<mm>\d{2}))?", re.ASCII)


def parse_kafka_datetime(text: str) -> int:
    """Epoch ms for `--to-datetime`, as Kafka's Utils.getDateTime reads it: no zone means UTC.

    Kafka tries a pattern with an hh:mm zone and then one with an hh zone (SimpleDateFormat's ISO 8601 zone
    letters, three and one), each a strict SimpleDateFormat that ignores text after the zone. Three inputs it
    misreads are refused here instead: +0530 (Kafka keeps +05), milliseconds that are not 3 digits (".5" is 5 ms
    to Kafka), and trailing text.
    """
    stripped = text.strip()
    if len(java_split(stripped, "T")) < 2:
        raise PlanError(NO_T_IN_DATETIME)
    match = _DATETIME.fullmatch(stripped)
    if not match:
        raise PlanError(UNPARSEABLE_DATE.format(text=text))
    year, month, day, hour, minute, second, millis, zone_text = match.groups()
    if millis is None or len(millis) != 3:
        raise PlanError(MILLISECONDS_REQUIRED.format(text=text))
    zone = _ZONE.fullmatch(zone_text) if zone_text else None
    if zone_text and not zone:
        raise PlanError(UNPARSEABLE_DATE.format(text=text))
    offset = timedelta(0)
    if zone and zone["sign"]:
        hours, minutes = int(zone["hh"]), int(zone["mm"] or 0)
        if hours > 23 or minutes > 59:
            raise PlanError(UNPARSEABLE_DATE.format(text=text))
        if ":" not in zone_text and minutes:
            fixed = f"{zone['sign']}{zone['hh']}:{zone['mm']}"
            raise PlanError(ZONE_MINUTES_DROPPED.format(text=text, zone=zone_text, fixed=fixed))
        offset = timedelta(hours=hours, minutes=minutes) * (-1 if zone["sign"] == "-" else 1)
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), int(millis) * 1000,
                          tzinfo=timezone(offset))
        return (moment - _EPOCH) // timedelta(milliseconds=1)
    except (ValueError, OverflowError):
        raise PlanError(UNPARSEABLE_DATE.format(text=text)) from None


_DURATION = re.compile(
    r"(?P<sign>[+-]?)P(?:(?P<d>[+-]?\d+)D)?"
    r"(?P<time>T(?:(?P<h>[+-]?\d+)H)?(?:(?P<m>[+-]?\d+)M)?(?:(?P<s>[+-]?\d+)(?:[.,](?P<frac>\d{0,9}))?S)?)?",
    re.IGNORECASE | re.ASCII,
)


def parse_kafka_duration(text: str) -> int:
    """Milliseconds for `--by-duration`, with java.time.Duration.parse's grammar: [+-]PnDTnHnMn.nS, no Y/M/W.

    Sub-millisecond fractions round up, so `now_ms - result` is what Kafka's `now.minus(d).toEpochMilli()` gives
    for a `now` on a whole millisecond.
    """
    match = _DURATION.fullmatch(text.strip())
    if not match or match["time"] in ("T", "t") or not any(match[g] for g in ("d", "h", "m", "s")):
        raise PlanError(INVALID_DURATION.format(text=text))
    # Java keeps each part, and their sum, in a long of seconds; past that it refuses the text.
    parts = [int(match[g]) * unit for g, unit in (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)) if match[g]]
    seconds = sum(parts)
    if not all(JAVA_LONG_MIN <= value <= JAVA_LONG_MAX for value in (*parts, seconds)):
        raise PlanError(INVALID_DURATION.format(text=text))
    nanos = int((match["frac"] or "").ljust(9, "0"))
    if match["s"] and match["s"].startswith("-"):
        nanos = -nanos  # Java: the seconds' sign carries over to the fraction ("PT-0.5S" is minus half a second)
    total_ns = (seconds * 1_000_000_000 + nanos) * (-1 if match["sign"] == "-" else 1)
    return -(-total_ns // 1_000_000)


def what_timestamps_needed(strategy: Strategy, now_ms: int) -> int | None:
    """The timestamp to ask ListOffsets about (to-datetime, by-duration), or None when the plan needs none."""
    if isinstance(strategy, ToDatetime):
        timestamp = parse_kafka_datetime(strategy.text)
    elif isinstance(strategy, ByDuration):
        timestamp = now_ms - parse_kafka_duration(strategy.text)
    else:
        return None
    # -1 and -2 are "latest" and "earliest" to ListOffsets: a date before 1970 must not turn into one of them.
    if not 0 <= timestamp <= JAVA_LONG_MAX:
        raise PlanError(TIMESTAMP_OUT_OF_RANGE.format(timestamp=timestamp))
    return timestamp
