"""Where a partition's reading starts or stops, in the words offset resets (offsets/resets) and replays (sparkjobs)
share: the log start, the log end, given offsets per partition, or the first record at or after a time.

Pure: no Django, no Kafka client. A reset's strategies add what only a reset means (the current commit, a shift,
a file, another group, an audit event's "before"), a replay's bounds what only a replay means (a group's commits,
the records a past reset skipped); these four are the same thing on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass

# What ListOffsets answers for a timestamp when no record is that late.
NO_RECORD_AT_TIME = -1


@dataclass(frozen=True)
class Earliest:
    """The log start: kafka-consumer-groups' --to-earliest, a replay's `earliest`."""


@dataclass(frozen=True)
class Latest:
    """The log end: --to-latest, a replay's `latest`."""


@dataclass(frozen=True)
class Offsets:
    """Given offsets, by partition number."""

    offsets: dict[int, int]


@dataclass(frozen=True)
class AtTime:
    """The first record at or after `timestamp_ms` (ms since the epoch)."""

    timestamp_ms: int


def at_time_or_log_end(found: int, log_end: int) -> int:
    """The offset ListOffsets found for a time, or the log end when no record is that late: what
    kafka-consumer-groups --to-datetime does, and where a replay bounded by such a time starts or stops."""
    return log_end if found == NO_RECORD_AT_TIME else found
