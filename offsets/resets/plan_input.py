"""What a reset is asked for besides its strategy, read as Kafka's ConsumerGroupCommand reads it: the `--topic`
scope and the `--from-file` CSV. Kafka's tool is Java, so Java's String.split and number parsing decide edge cases.

Pure: no Django, no Kafka client.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gateway.kafka.types import PartitionRef

# Kafka's own texts (the doubled quote at the end of INVALID_PARTITION is in Kafka's source).
INVALID_TOPIC_ARG = "Invalid topic arg '{arg}', expected topic name and partitions"
INVALID_PARTITION = "Invalid partition '{partition}' specified in topic arg '{arg}''"
NONEXISTENT_PARTITIONS = 'The partitions "{partitions}" do not exist'
NO_RESET_PLAN = "No reset plan for group {group} found"

# The console's own texts.
UNKNOWN_TOPIC = "Topic '{topic}' does not exist"
BAD_FILE_LINE = "Line {line} of the reset file is not {expected}: {text!r}"

JAVA_LONG_MIN, JAVA_LONG_MAX = -(2**63), 2**63 - 1
JAVA_INT_MIN, JAVA_INT_MAX = -(2**31), 2**31 - 1


class PlanError(ValueError):
    """A reset that cannot be planned, with a message meant for the person who asked."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ---- Java's reading of text -----------------------------------------------------------------------------------


def java_split(text: str, sep: str) -> list[str]:
    # Java's String.split drops trailing empty strings, which decides what "t:" and "t:0," mean.
    if sep not in text:
        return [text]
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_int(text: str, low: int, high: int) -> int | None:
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if low <= value <= high else None


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


def parse_topic_scope(arg: str) -> TopicScope:
    """One `--topic` argument, parsed as Kafka's parseTopicsWithPartitions does."""
    if ":" not in arg:
        return TopicScope(arg)
    parts = java_split(arg, ":")
    if len(parts) != 2:
        raise PlanError(INVALID_TOPIC_ARG.format(arg=arg))
    partitions = []
    for text in java_split(parts[1], ","):
        number = java_int(text, JAVA_INT_MIN, JAVA_INT_MAX)
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


# ---- Reset file ----------------------------------------------------------------------------------------------

_NO_GROUP, _WITH_GROUP = "topic,partition,offset", "group,topic,partition,offset"


def _file_record(line: str, columns: int) -> tuple[str, str, int, int] | None:
    fields = [f.strip() for f in next(csv.reader([line]))]
    if len(fields) != columns:
        return None
    group, topic, partition, offset = fields if columns == 4 else ["", *fields]
    partition_number = java_int(partition, 0, JAVA_INT_MAX)
    offset_number = java_int(offset, JAVA_LONG_MIN, JAVA_LONG_MAX)
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
