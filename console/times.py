"""The one reader of the times and durations people type where the console turns them into Kafka timestamps
(epoch milliseconds, what ListOffsets is asked about): offset resets (`--to-datetime`, `--by-duration`) and
replays' start and end bounds. A time without a zone is UTC, and milliseconds are counted exactly (floor), for
both.

Two grammars, because the two callers promise different things: a reset reads a time exactly as Kafka's
kafka-consumer-groups reads it (the console's answers must match the tool's), a replay takes any ISO 8601 form
Python reads. Pure: no Django, no clock.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
JAVA_LONG_MIN, JAVA_LONG_MAX = -(2**63), 2**63 - 1

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
NOT_ISO_8601 = "Cannot read the time '{text}': use ISO 8601, e.g. 2026-11-21T03:00:00+01:00 (no zone means UTC)."


class TimeTextError(ValueError):
    """A time or duration that cannot be read, with a message meant for the person who typed it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def epoch_ms(moment: datetime) -> int:
    """Milliseconds since the epoch, rounded down (also before 1970); a naive time is UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - EPOCH) // timedelta(milliseconds=1)


def parse_time_ms(text: str, *, as_kafka_tool: bool = False) -> int:
    """Epoch milliseconds of a date and time: any ISO 8601 form `datetime.fromisoformat` reads, or with
    `as_kafka_tool` only what `kafka-consumer-groups --to-datetime` reads. Raises TimeTextError."""
    stripped = text.strip()
    if as_kafka_tool:
        return _kafka_time_ms(stripped, text)
    try:
        return epoch_ms(datetime.fromisoformat(stripped))
    except (ValueError, OverflowError):
        raise TimeTextError(NOT_ISO_8601.format(text=text)) from None


_DATETIME = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})T(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d+))?(.*)", re.ASCII)
_ZONE = re.compile(r"Z|(?P<sign>[+-])(?P<hh>\d{2})(?::?(?P<mm>\d{2}))?", re.ASCII)


def _kafka_time_ms(stripped: str, text: str) -> int:
    """As Kafka's Utils.getDateTime reads a time: no zone means UTC.

    Kafka tries a pattern with an hh:mm zone and then one with an hh zone (SimpleDateFormat's ISO 8601 zone
    letters, three and one), each a strict SimpleDateFormat that ignores text after the zone. Three inputs it
    misreads are refused here instead: +0530 (Kafka keeps +05), milliseconds that are not 3 digits (".5" is 5 ms
    to Kafka), and trailing text.
    """
    # Kafka first splits on 'T' with Java's String.split, which drops trailing empty parts: a 'T' counts only
    # when something other than 'T' follows it.
    if "T" not in stripped.rstrip("T"):
        raise TimeTextError(NO_T_IN_DATETIME)
    match = _DATETIME.fullmatch(stripped)
    if not match:
        raise TimeTextError(UNPARSEABLE_DATE.format(text=text))
    year, month, day, hour, minute, second, millis, zone_text = match.groups()
    if millis is None or len(millis) != 3:
        raise TimeTextError(MILLISECONDS_REQUIRED.format(text=text))
    zone = _ZONE.fullmatch(zone_text) if zone_text else None
    if zone_text and not zone:
        raise TimeTextError(UNPARSEABLE_DATE.format(text=text))
    offset = timedelta(0)
    if zone and zone["sign"]:
        hours, minutes = int(zone["hh"]), int(zone["mm"] or 0)
        if hours > 23 or minutes > 59:
            raise TimeTextError(UNPARSEABLE_DATE.format(text=text))
        if ":" not in zone_text and minutes:
            fixed = f"{zone['sign']}{zone['hh']}:{zone['mm']}"
            raise TimeTextError(ZONE_MINUTES_DROPPED.format(text=text, zone=zone_text, fixed=fixed))
        offset = timedelta(hours=hours, minutes=minutes) * (-1 if zone["sign"] == "-" else 1)
    try:
        return epoch_ms(datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                                 int(millis) * 1000, tzinfo=timezone(offset)))
    except (ValueError, OverflowError):
        raise TimeTextError(UNPARSEABLE_DATE.format(text=text)) from None


_DURATION = re.compile(
    r"(?P<sign>[+-]?)P(?:(?P<d>[+-]?\d+)D)?"
    r"(?P<time>T(?:(?P<h>[+-]?\d+)H)?(?:(?P<m>[+-]?\d+)M)?(?:(?P<s>[+-]?\d+)(?:[.,](?P<frac>\d{0,9}))?S)?)?",
    re.IGNORECASE | re.ASCII,
)


def parse_duration_ms(text: str) -> int:
    """Milliseconds of a duration with java.time.Duration.parse's grammar ([+-]PnDTnHnMn.nS, no Y/M/W), as
    `kafka-consumer-groups --by-duration` reads it. Raises TimeTextError.

    Sub-millisecond fractions round up, so `now_ms - result` is what Kafka's `now.minus(d).toEpochMilli()` gives
    for a `now` on a whole millisecond.
    """
    match = _DURATION.fullmatch(text.strip())
    if not match or match["time"] in ("T", "t") or not any(match[g] for g in ("d", "h", "m", "s")):
        raise TimeTextError(INVALID_DURATION.format(text=text))
    # Java keeps each part, and their sum, in a long of seconds; past that it refuses the text.
    parts = [int(match[g]) * unit for g, unit in (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)) if match[g]]
    seconds = sum(parts)
    if not all(JAVA_LONG_MIN <= value <= JAVA_LONG_MAX for value in (*parts, seconds)):
        raise TimeTextError(INVALID_DURATION.format(text=text))
    nanos = int((match["frac"] or "").ljust(9, "0"))
    if match["s"] and match["s"].startswith("-"):
        nanos = -nanos  # Java: the seconds' sign carries over to the fraction ("PT-0.5S" is minus half a second)
    total_ns = (seconds * 1_000_000_000 + nanos) * (-1 if match["sign"] == "-" else 1)
    return -(-total_ns // 1_000_000)
