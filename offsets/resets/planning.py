"""Pure offset-reset planning: what `kafka-consumer-groups --reset-offsets --dry-run` computes, from state already read.

No Django, no Kafka client, no clock: the caller reads committed offsets, log start/end offsets and (when
`what_timestamps_needed` says so) offsets for a timestamp, passes "now" in, and gets a `ResetPlan` back.
Semantics follow Kafka's ConsumerGroupCommand (see shared/reference/kafka_internals.md §1). Where the console
refuses input that Kafka would accept but silently misread, the comment at that spot says so.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

from console.kafka.types import OffsetAt, PartitionRef

# Kafka's own texts (the doubled quote at the end of INVALID_PARTITION is in Kafka's source).
INVALID_TOPIC_ARG = "Invalid topic arg '{arg}', expected topic name and partitions"
INVALID_PARTITION = "Invalid partition '{partition}' specified in topic arg '{arg}''"
NONEXISTENT_PARTITIONS = 'The partitions "{partitions}" do not exist'
NO_COMMIT_TO_SHIFT = "Cannot shift offset for partition {ref} since there is no current committed offset"
NO_T_IN_DATETIME = "Error parsing timestamp. It does not contain a 'T' according to ISO8601 format"
NO_RESET_PLAN = "No reset plan for group {group} found"
NO_TIMESTAMP_OFFSET = "Error getting offset by timestamp of topic partition: {ref}"
NOTE_CLAMPED_HIGH = ("New offset ({requested}) is higher than latest offset for topic partition {ref}. "
                     "Value will be set to {end}")
NOTE_CLAMPED_LOW = ("New offset ({requested}) is lower than earliest offset for topic partition {ref}. "
                    "Value will be set to {start}")
NOTE_EMPTY_PARTITION = "Partition {partition} from topic {topic} is empty. Falling back to latest known offset."

# The console's own texts.
UNKNOWN_TOPIC = "Topic '{topic}' does not exist"
NO_LOG_OFFSETS = "Log start and end offsets are missing for partitions: {partitions}"
UNPARSEABLE_DATE = ("Unparseable date: \"{text}\"; expected yyyy-MM-ddTHH:mm:ss.SSS, optionally followed by "
                    "Z, +hh, +hhmm or +hh:mm (no zone means UTC)")
MILLISECONDS_REQUIRED = ("Unparseable date: \"{text}\"; the time needs milliseconds with exactly 3 digits, "
                         "as in 2024-01-31T09:30:00.000 (Kafka reads .5 as 5 ms)")
ZONE_MINUTES_DROPPED = ("Unparseable date: \"{text}\"; Kafka reads only the hours of a +hhmm offset, "
                        "so write {zone} as {fixed}")
INVALID_DURATION = "Text cannot be parsed to a Duration: \"{text}\"; expected PnDTnHnMn.nS, e.g. PT30M or P1DT12H"
TIMESTAMP_OUT_OF_RANGE = ("Timestamp {timestamp} ms is out of range: offsets are searched from 0 "
                          "(1970-01-01T00:00:00.000Z) on, and negative values mean latest or earliest to Kafka")
BAD_FILE_LINE = "Line {line} of the reset file is not {expected}: {text!r}"
NOTE_NO_COMMIT = "No committed offset: to-current uses the log end offset"
NOTE_OFFSET_DELETED = "offset deleted: the group had no committed offset here before"
NOTE_COMMIT_OUT_OF_RANGE = ("The committed offset is outside the log (offsets {start} to {end}); to-current keeps "
                            "it and consumers will apply auto.offset.reset")

_JAVA_LONG_MIN, _JAVA_LONG_MAX = -(2**63), 2**63 - 1
_JAVA_INT_MIN, _JAVA_INT_MAX = -(2**31), 2**31 - 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class PlanError(ValueError):
    """A reset that cannot be planned, with a message meant for the person who asked."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ---- Scope ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AllTopics:
    """`--all-topics`: every partition the group already has a committed offset for."""


ALL_TOPICS = AllTopics()


@dataclass(frozen=True)
class TopicScope:
    """`--topic t` (partitions None: all of them) or `--topic t:0,1,2`."""

    topic: str
    partitions: tuple[int, ...] | None = None


def _java_split(text: str, sep: str) -> list[str]:
    # Java's String.split drops trailing empty strings, which decides what "t:" and "t:0," mean.
    if sep not in text:
        return [text]
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _java_int(text: str, low: int, high: int) -> int | None:
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if low <= value <= high else None


def parse_topic_scope(arg: str) -> TopicScope:
    """One `--topic` argument, parsed as Kafka's parseTopicsWithPartitions does."""
    if ":" not in arg:
        return TopicScope(arg)
    parts = _java_split(arg, ":")
    if len(parts) != 2:
        raise PlanError(INVALID_TOPIC_ARG.format(arg=arg))
    partitions = []
    for text in _java_split(parts[1], ","):
        number = _java_int(text, _JAVA_INT_MIN, _JAVA_INT_MAX)
        if number is None:
            raise PlanError(INVALID_PARTITION.format(partition=text, arg=arg))
        partitions.append(number)
    return TopicScope(parts[0], tuple(partitions))


def resolve_partitions(scope: AllTopics | TopicScope | Sequence[TopicScope], *, committed: Mapping[PartitionRef, int],
                       partition_counts: Mapping[str, int]) -> list[PartitionRef]:
    """The partitions a scope covers, sorted; repeated topics are merged (Kafka would fail on a duplicate key)."""
    if isinstance(scope, AllTopics):
        return sorted(committed)
    scopes = [scope] if isinstance(scope, TopicScope) else list(scope)
    refs: set[PartitionRef] = set()
    for item in scopes:
        if item.topic not in partition_counts:
            raise PlanError(UNKNOWN_TOPIC.format(topic=item.topic))
        count = partition_counts[item.topic]
        wanted = range(count) if item.partitions is None else item.partitions
        refs.update(PartitionRef(item.topic, p) for p in wanted)
    # Kafka 3.x takes explicit partitions on trust and fails later in ListOffsets; trunk's KAFKA-19500 check
    # (apache/kafka#20168; first release not verified) refuses them with this text. The console always refuses
    # them, so it is stricter than any Kafka release without that check.
    missing = sorted(r for r in refs if not 0 <= r.partition < partition_counts[r.topic])
    if missing:
        raise PlanError(NONEXISTENT_PARTITIONS.format(partitions=",".join(map(str, missing))))
    return sorted(refs)


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
_CLAMPED = (ToOffset, ShiftBy, FromFile, FromGroup, ToRecorded)
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
    if len(_java_split(stripped, "T")) < 2:
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
    if not all(_JAVA_LONG_MIN <= value <= _JAVA_LONG_MAX for value in (*parts, seconds)):
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
    if not 0 <= timestamp <= _JAVA_LONG_MAX:
        raise PlanError(TIMESTAMP_OUT_OF_RANGE.format(timestamp=timestamp))
    return timestamp


# ---- Reset file ----------------------------------------------------------------------------------------------

_NO_GROUP, _WITH_GROUP = "topic,partition,offset", "group,topic,partition,offset"


def _file_record(line: str, columns: int) -> tuple[str, str, int, int] | None:
    fields = [f.strip() for f in next(csv.reader([line]))]
    if len(fields) != columns:
        return None
    group, topic, partition, offset = fields if columns == 4 else ["", *fields]
    partition_number = _java_int(partition, 0, _JAVA_INT_MAX)
    offset_number = _java_int(offset, _JAVA_LONG_MIN, _JAVA_LONG_MAX)
    if not topic or partition_number is None or offset_number is None:
        return None
    return group, topic, partition_number, offset_number


def parse_reset_file(csv_text: str, *, group: str) -> dict[PartitionRef, int]:
    """`--from-file` for one group: Kafka's `--export` CSV, `topic,partition,offset` or `group,topic,partition,offset`.

    As in Kafka, the first line decides the format and a later line for the same partition wins. Blank lines and
    CR line ends are tolerated (Kafka drops only trailing blank lines); line numbers count every line.
    """
    lines = [(number, line.rstrip("\r")) for number, line in enumerate(csv_text.split("\n"), start=1)]
    lines = [(number, line) for number, line in lines if line.strip()]
    if not lines:
        raise PlanError(NO_RESET_PLAN.format(group=group))
    columns = 3 if _file_record(lines[0][1], 3) else 4
    plan: dict[PartitionRef, int] = {}
    for number, line in lines:
        record = _file_record(line, columns)
        if record is None:
            expected = _NO_GROUP if columns == 3 else _WITH_GROUP
            raise PlanError(BAD_FILE_LINE.format(line=number, expected=expected, text=line))
        line_group, topic, partition, offset = record
        if columns == 3 or line_group == group:
            plan[PartitionRef(topic, partition)] = offset
    if not plan:
        raise PlanError(NO_RESET_PLAN.format(group=group))
    return plan


# ---- The plan ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanRow:
    ref: PartitionRef
    current: int | None  # the group's committed offset, None when it has none
    log_start: int
    log_end: int
    target: int | None  # None: the committed offset is deleted (a revert to "no committed offset")
    clamped: bool = False
    note: str = ""

    @property
    def deletes(self) -> bool:
        return self.target is None

    @property
    def delta(self) -> int | None:
        return None if self.current is None or self.target is None else self.target - self.current

    @property
    def records_to_reread(self) -> int | None:
        """Records still in the log between target and current, which the group will consume again."""
        if self.current is None or self.target is None:
            return None
        return max(0, min(self.current, self.log_end) - max(self.target, self.log_start))

    @property
    def records_to_skip(self) -> int | None:
        """Records still in the log between current and target, which the group will never consume."""
        if self.current is None or self.target is None:
            return None
        return max(0, min(self.target, self.log_end) - max(self.current, self.log_start))


@dataclass(frozen=True)
class ResetPlan:
    group: str
    strategy: Strategy
    rows: tuple[PlanRow, ...]
    timestamp: int | None = None  # what ListOffsets was asked for (to-datetime, by-duration)

    @property
    def targets(self) -> dict[PartitionRef, int]:
        """The offsets to commit."""
        return {row.ref: row.target for row in self.rows if row.target is not None}

    @property
    def deletions(self) -> list[PartitionRef]:
        """The committed offsets to delete (only a revert to "no committed offset" has any)."""
        return [row.ref for row in self.rows if row.target is None]

    def export_csv(self) -> str:
        """Kafka's `--export` for one group: `topic,partition,offset` lines, no header, each ending in \\n.
        A deletion has no line: Kafka's file format cannot say "no offset"."""
        return "".join(f"{row.ref.topic},{row.ref.partition},{row.target}\n" for row in self.rows
                       if row.target is not None)


def reset_partitions(strategy: Strategy, *, group: str, scope_partitions: Sequence[PartitionRef]) -> list[PartitionRef]:
    """The partitions a plan covers, so the caller knows which log offsets to read.

    from-file takes them from the file and ignores the scope, as Kafka does; from-group and to-recorded keep the
    scope's partitions that their mapping has; everything else covers the scope.
    """
    if isinstance(strategy, FromFile):
        return sorted(parse_reset_file(strategy.csv_text, group=group))
    if isinstance(strategy, FromGroup | ToRecorded):
        return sorted(r for r in set(scope_partitions) if r in strategy.offsets)
    return sorted(set(scope_partitions))


def _offset(value: int | OffsetAt) -> int:
    return value.offset if isinstance(value, OffsetAt) else value


def _requested(strategy: Strategy, refs: list[PartitionRef], committed: Mapping[PartitionRef, int],
               group: str) -> dict[PartitionRef, int | None]:
    match strategy:
        case ToOffset(offset):
            return {r: offset for r in refs}
        case ShiftBy(delta):
            missing = [r for r in refs if r not in committed]
            if missing:
                raise PlanError(NO_COMMIT_TO_SHIFT.format(ref=missing[0]))
            return {r: committed[r] + delta for r in refs}
        case FromFile(csv_text):
            return parse_reset_file(csv_text, group=group)
        case FromGroup(offsets) | ToRecorded(offsets):
            return {r: offsets[r] for r in refs}
    raise TypeError(f"not a clamped strategy: {strategy!r}")


def _clamped_row(ref: PartitionRef, requested: int, current: int | None, start: int, end: int) -> PlanRow:
    # Kafka's checkOffsetsRange: the log end test comes first, so it wins if start > end ever happened.
    if requested > end:
        note = NOTE_CLAMPED_HIGH.format(requested=requested, ref=ref, end=end)
        return PlanRow(ref, current, start, end, end, clamped=True, note=note)
    if requested < start:
        note = NOTE_CLAMPED_LOW.format(requested=requested, ref=ref, start=start)
        return PlanRow(ref, current, start, end, start, clamped=True, note=note)
    return PlanRow(ref, current, start, end, requested)


def _unclamped_row(strategy: Strategy, ref: PartitionRef, current: int | None, start: int, end: int,
                   by_timestamp: Mapping[PartitionRef, int | OffsetAt]) -> PlanRow:
    match strategy:
        case ToEarliest():
            return PlanRow(ref, current, start, end, start)
        case ToLatest():
            return PlanRow(ref, current, start, end, end)
        case ToCurrent() if current is None:
            return PlanRow(ref, current, start, end, end, note=NOTE_NO_COMMIT)
        case ToCurrent():
            note = "" if start <= current <= end else NOTE_COMMIT_OUT_OF_RANGE.format(start=start, end=end)
            return PlanRow(ref, current, start, end, current, note=note)
        case ToDatetime() | ByDuration():
            if ref not in by_timestamp:
                raise PlanError(NO_TIMESTAMP_OFFSET.format(ref=ref))
            found = _offset(by_timestamp[ref])
            if found == -1:  # no record at or after the timestamp
                note = NOTE_EMPTY_PARTITION.format(partition=ref.partition, topic=ref.topic)
                return PlanRow(ref, current, start, end, end, note=note)
            return PlanRow(ref, current, start, end, found)
    raise TypeError(f"not a strategy: {strategy!r}")


def plan_reset(*, group: str, partitions: Sequence[PartitionRef], strategy: Strategy,
               committed: Mapping[PartitionRef, int], log_start: Mapping[PartitionRef, int | OffsetAt],
               log_end: Mapping[PartitionRef, int | OffsetAt],
               by_timestamp: Mapping[PartitionRef, int | OffsetAt] | None = None, now_ms: int) -> ResetPlan:
    """The new offset of every partition, as `--reset-offsets --dry-run` prints it, with the reason when it moved.

    `partitions` is the resolved scope (ignored by from-file); log offsets are needed for every partition of
    `reset_partitions(...)`, and `by_timestamp` (ListOffsets at `what_timestamps_needed(...)`) for timestamp plans.
    """
    refs = reset_partitions(strategy, group=group, scope_partitions=partitions)
    missing = [r for r in refs if r not in log_start or r not in log_end]
    if missing:
        raise PlanError(NO_LOG_OFFSETS.format(partitions=",".join(map(str, missing))))
    timestamp = what_timestamps_needed(strategy, now_ms)
    requested = _requested(strategy, refs, committed, group) if isinstance(strategy, _CLAMPED) else None
    rows = []
    for ref in refs:
        start, end, current = _offset(log_start[ref]), _offset(log_end[ref]), committed.get(ref)
        if requested is not None and requested[ref] is None:
            rows.append(PlanRow(ref, current, start, end, None, note=NOTE_OFFSET_DELETED))
        elif requested is not None:
            rows.append(_clamped_row(ref, requested[ref], current, start, end))
        else:
            rows.append(_unclamped_row(strategy, ref, current, start, end, by_timestamp or {}))
    return ResetPlan(group=group, strategy=strategy, rows=tuple(rows), timestamp=timestamp)
