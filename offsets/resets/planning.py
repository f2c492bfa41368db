"""Pure offset-reset planning: what `kafka-consumer-groups --reset-offsets --dry-run` computes, from state already read.

No Django, no Kafka client, no clock: the caller reads committed offsets, log start/end offsets and (when
`what_timestamps_needed` says so) offsets for a timestamp, passes "now" in, and gets a `ResetPlan` back.
Semantics follow Kafka's ConsumerGroupCommand (see shared/reference/kafka_internals.md §1). Where the console
refuses input that Kafka would accept but silently misread, the comment at that spot says so. The scope and the
reset file are read in `plan_input`, the strategies and their dates in `strategies`; their names are importable
from here too, as the planner's one face.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gateway.kafka.types import OffsetAt, PartitionRef
from console.offset_bounds import NO_RECORD_AT_TIME, at_time_or_log_end
from offsets.resets.plan_input import (
    ALL_TOPICS, BAD_FILE_LINE, INVALID_PARTITION, INVALID_TOPIC_ARG, NO_RESET_PLAN, NONEXISTENT_PARTITIONS,
    UNKNOWN_TOPIC, AllTopics, PlanError, TopicScope, parse_reset_file, parse_topic_scope, resolve_partitions,
)
from offsets.resets.strategies import (
    INVALID_DURATION, MILLISECONDS_REQUIRED, NO_T_IN_DATETIME, TIMESTAMP_OUT_OF_RANGE, UNPARSEABLE_DATE,
    ZONE_MINUTES_DROPPED, ByDuration, FromFile, FromGroup, ShiftBy, Strategy, ToCurrent, ToDatetime, ToEarliest,
    ToLatest, ToOffset, ToRecorded, describe_strategy, parse_kafka_datetime, parse_kafka_duration,
    what_timestamps_needed,
)

# Kafka's own texts.
NO_COMMIT_TO_SHIFT = "Cannot shift offset for partition {ref} since there is no current committed offset"
NO_TIMESTAMP_OFFSET = "Error getting offset by timestamp of topic partition: {ref}"
NOTE_CLAMPED_HIGH = ("New offset ({requested}) is higher than latest offset for topic partition {ref}. "
                     "Value will be set to {end}")
NOTE_CLAMPED_LOW = ("New offset ({requested}) is lower than earliest offset for topic partition {ref}. "
                    "Value will be set to {start}")
NOTE_EMPTY_PARTITION = "Partition {partition} from topic {topic} is empty. Falling back to latest known offset."

# The console's own texts.
NO_LOG_OFFSETS = "Log start and end offsets are missing for partitions: {partitions}"
NOTE_NO_COMMIT = "No committed offset: to-current uses the log end offset"
NOTE_OFFSET_DELETED = "offset deleted: the group had no committed offset here before"
NOTE_COMMIT_OUT_OF_RANGE = ("The committed offset is outside the log (offsets {start} to {end}); to-current keeps "
                            "it and consumers will apply auto.offset.reset")

# Strategies whose requested offsets are kept inside the log, as Kafka's checkOffsetsRange keeps them.
_CLAMPED = (ToOffset, ShiftBy, FromFile, FromGroup, ToRecorded)

__all__ = [
    "ALL_TOPICS", "BAD_FILE_LINE", "INVALID_DURATION", "INVALID_PARTITION", "INVALID_TOPIC_ARG",
    "MILLISECONDS_REQUIRED", "NO_COMMIT_TO_SHIFT", "NO_LOG_OFFSETS", "NO_RESET_PLAN", "NO_T_IN_DATETIME",
    "NO_TIMESTAMP_OFFSET", "NONEXISTENT_PARTITIONS", "NOTE_CLAMPED_HIGH", "NOTE_CLAMPED_LOW",
    "NOTE_COMMIT_OUT_OF_RANGE", "NOTE_EMPTY_PARTITION", "NOTE_NO_COMMIT", "NOTE_OFFSET_DELETED",
    "TIMESTAMP_OUT_OF_RANGE", "UNKNOWN_TOPIC", "UNPARSEABLE_DATE", "ZONE_MINUTES_DROPPED", "AllTopics", "ByDuration",
    "FromFile", "FromGroup", "PlanError", "PlanRow", "ResetPlan", "ShiftBy", "Strategy", "ToCurrent", "ToDatetime",
    "ToEarliest", "ToLatest", "ToOffset", "ToRecorded", "TopicScope", "describe_strategy", "parse_kafka_datetime",
    "parse_kafka_duration", "parse_reset_file", "parse_topic_scope", "plan_reset", "reset_partitions",
    "resolve_partitions", "what_timestamps_needed",
]


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
    def lag_now(self) -> int | None:
        """Records from the committed offset to the log end: the lag before the reset."""
        return None if self.current is None else max(0, self.log_end - self.current)

    @property
    def lag_after(self) -> int | None:
        """Records from the target to the log end: the lag right after the reset."""
        return None if self.target is None else max(0, self.log_end - self.target)

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
            note = NOTE_EMPTY_PARTITION.format(partition=ref.partition, topic=ref.topic) \
                if found == NO_RECORD_AT_TIME else ""
            return PlanRow(ref, current, start, end, at_time_or_log_end(found, end), note=note)
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
