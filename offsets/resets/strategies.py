"""The reset strategies (`--to-earliest` ... `--from-file`, and the console's from-group and to-recorded), what
each is called in Kafka's options, and the dates and durations they carry, read as Kafka's tool reads them.

Pure: no Django, no Kafka client, no clock (callers pass "now").
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.kafka.types import PartitionRef
from console.offset_bounds import Earliest, Latest
from console.times import (  # noqa: F401  (the reset messages callers and tests import from offsets)
    INVALID_DURATION, MILLISECONDS_REQUIRED, NO_T_IN_DATETIME, UNPARSEABLE_DATE, ZONE_MINUTES_DROPPED, TimeTextError,
    parse_duration_ms, parse_time_ms,
)
from offsets.resets.plan_input import JAVA_LONG_MAX, PlanError

TIMESTAMP_OUT_OF_RANGE = ("Timestamp {timestamp} ms is out of range: offsets are searched from 0 "
                          "(1970-01-01T00:00:00.000Z) on, and negative values mean latest or earliest to Kafka")


# ---- Strategies ----------------------------------------------------------------------------------------------


# --to-earliest and --to-latest are the log start and end a replay starts or stops at too (console/offset_bounds.py).
ToEarliest = Earliest
ToLatest = Latest


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


def parse_kafka_datetime(text: str) -> int:
    """Epoch ms for `--to-datetime`, read as Kafka's tool reads it (console/times.py)."""
    try:
        return parse_time_ms(text, as_kafka_tool=True)
    except TimeTextError as exc:
        raise PlanError(exc.message) from None


def parse_kafka_duration(text: str) -> int:
    """Milliseconds for `--by-duration`, read as Kafka's tool reads it (console/times.py)."""
    try:
        return parse_duration_ms(text)
    except TimeTextError as exc:
        raise PlanError(exc.message) from None


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
