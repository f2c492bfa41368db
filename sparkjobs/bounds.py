"""Pure parsing of replay bounds as people write them; resolution to offsets happens in sparkjobs.selectors.
Earliest, Latest, Offsets and AtTime are console/offset_bounds.py's, which resets use too."""

from __future__ import annotations

from dataclasses import dataclass

from console.errors import ConsoleError
from console.offset_bounds import AtTime, Earliest, Latest, Offsets  # noqa: F401 - a replay's bounds too
from console.times import TimeTextError, parse_time_ms

MSG_BAD_BOUND = ("Cannot read {which} '{text}': use earliest, offsets:P=O[,P=O], timestamp:ISO-8601, group:GROUP "
                 "or reset:AUDIT_EVENT_ID (start) / latest, offsets:..., timestamp:... (end).")


@dataclass(frozen=True)
class GroupCommitted:
    group: str


@dataclass(frozen=True)
class SkippedByReset:
    """The records a past reset skipped: from its "before" to its "after" offsets, where after > before."""

    seq: int


def parse_time(text: str) -> int:
    try:
        return parse_time_ms(text)
    except TimeTextError as exc:
        raise ConsoleError(exc.message) from exc


def _offsets(text: str, which: str) -> Offsets:
    pairs = {}
    for item in text.split(","):
        partition, sep, offset = item.partition("=")
        if not sep or not partition.strip().isdigit() or not offset.strip().lstrip("-").isdigit():
            raise ConsoleError(MSG_BAD_BOUND.format(which=which, text=text))
        pairs[int(partition)] = int(offset)
    return Offsets(pairs)


def parse_start(text: str):
    kind, _, rest = text.strip().partition(":")
    if kind == "earliest" and not rest:
        return Earliest()
    if kind == "offsets" and rest:
        return _offsets(rest, "start")
    if kind == "timestamp" and rest:
        return AtTime(parse_time(rest))
    if kind == "group" and rest.strip():
        return GroupCommitted(rest.strip())
    if kind == "reset" and rest.strip().isdigit():
        return SkippedByReset(int(rest))
    raise ConsoleError(MSG_BAD_BOUND.format(which="start", text=text))


def parse_end(text: str):
    kind, _, rest = text.strip().partition(":")
    if kind == "latest" and not rest:
        return Latest()
    if kind == "offsets" and rest:
        return _offsets(rest, "end")
    if kind == "timestamp" and rest:
        return AtTime(parse_time(rest))
    raise ConsoleError(MSG_BAD_BOUND.format(which="end", text=text))


def clamp_ranges(starts: dict[int, int], ends: dict[int, int], log_start: dict[int, int],
                 log_end: dict[int, int]) -> dict[int, tuple[int, int]]:
    """[start, end) per partition inside the log; an end before its start gives an empty range."""
    ranges = {}
    for p in sorted(starts):
        start = min(max(starts[p], log_start[p]), log_end[p])
        end = min(max(ends[p], log_start[p]), log_end[p])
        ranges[p] = (start, max(start, end))
    return ranges
