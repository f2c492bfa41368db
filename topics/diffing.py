"""Pure planning for topic and broker changes: config diffs and purge (delete-records) previews."""

from __future__ import annotations

from dataclasses import dataclass

from console.errors import ConsoleError
from gateway.kafka.types import ConfigEntryInfo, OffsetAt, PartitionRef

MSG_NOTHING_TO_CHANGE = "Nothing to change: give at least one config to set or remove."
MSG_SET_AND_DELETE = "A config cannot be set and removed at once: {keys}."


def check_config_request(set_values: dict[str, str], delete: list[str]) -> None:
    if not set_values and not delete:
        raise ConsoleError(MSG_NOTHING_TO_CHANGE)
    both = sorted(set(set_values) & set(delete))
    if both:
        raise ConsoleError(MSG_SET_AND_DELETE.format(keys=", ".join(both)))


@dataclass(frozen=True)
class ConfigChange:
    name: str
    old_value: str | None
    old_source: str
    new_value: str | None  # None when the override is removed and the inherited value is unknown
    new_source: str  # "override" or the source the value falls back to
    action: str  # set, remove
    read_only: bool = False
    unknown: bool = False

    @property
    def noop(self) -> bool:
        return self.action == "set" and self.old_value == self.new_value and self.old_source in ("topic", "dynamic-broker")


def config_diff(current: dict[str, ConfigEntryInfo], *, set_values: dict[str, str], delete: list[str],
                inherited: dict[str, str | None] | None = None) -> list[ConfigChange]:
    """What each requested change does: old value and where it comes from → new value and where it will come from."""
    inherited = inherited or {}
    changes: list[ConfigChange] = []
    for name, value in sorted(set_values.items()):
        entry = current.get(name)
        changes.append(ConfigChange(
            name=name, old_value=entry.value if entry else None, old_source=entry.source if entry else "unknown",
            new_value=value, new_source="override", action="set", read_only=bool(entry and entry.read_only),
            unknown=entry is None,
        ))
    for name in sorted(delete):
        entry = current.get(name)
        fallback = inherited.get(name, entry.inherited_value if entry else None)
        changes.append(ConfigChange(
            name=name, old_value=entry.value if entry else None, old_source=entry.source if entry else "unknown",
            new_value=fallback, new_source="inherited", action="remove", read_only=bool(entry and entry.read_only),
            unknown=entry is None,
        ))
    return changes


@dataclass(frozen=True)
class PurgeRow:
    partition: int
    log_start: int
    log_end: int
    requested: int
    target: int  # the offset records below which are deleted, after clamping to [log_start, log_end]
    clamped: bool

    @property
    def records_deleted(self) -> int:
        return max(0, self.target - self.log_start)


def purge_plan(topic: str, requested: dict[int, int | None], starts: dict[PartitionRef, OffsetAt],
               ends: dict[PartitionRef, OffsetAt]) -> list[PurgeRow]:
    """`requested[p]` is the offset to delete up to (exclusive), or None for "everything now in the partition"."""
    rows = []
    for partition, offset in sorted(requested.items()):
        ref = PartitionRef(topic, partition)
        start, end = starts[ref].offset, ends[ref].offset
        wanted = end if offset is None else offset
        target = min(max(wanted, start), end)
        rows.append(PurgeRow(partition=partition, log_start=start, log_end=end, requested=wanted, target=target,
                             clamped=target != wanted))
    return rows
