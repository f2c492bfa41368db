"""Turns what a person typed (shell options or form fields) into a planner scope and strategy."""

from __future__ import annotations

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from offsets.resets.planning import (
    ALL_TOPICS,
    ByDuration,
    FromFile,
    FromGroup,
    PlanError,
    ShiftBy,
    ToCurrent,
    ToDatetime,
    ToEarliest,
    ToLatest,
    ToOffset,
    parse_topic_scope,
)

# Each strategy's name (the shell's option) and the planner object it becomes.
STRATEGY_TYPES = {"to-earliest": ToEarliest, "to-latest": ToLatest, "to-current": ToCurrent, "to-offset": ToOffset,
                  "shift-by": ShiftBy, "to-datetime": ToDatetime, "by-duration": ByDuration, "from-file": FromFile,
                  "from-group": FromGroup}
STRATEGIES = tuple(STRATEGY_TYPES)
MSG_ONE_SCOPE = "One of the reset scopes should be defined: --all-topics, --topic."
MSG_NEEDS_VALUE = "--{name} needs a value."


def scope_from(all_topics: bool, topics: list[str]):
    if all_topics and topics:
        raise ConsoleError("Give either --all-topics or --topic, not both.")
    if all_topics:
        return ALL_TOPICS
    if not topics:
        raise ConsoleError(MSG_ONE_SCOPE)
    try:
        return [parse_topic_scope(t) for t in topics]
    except PlanError as exc:
        raise ConsoleError(exc.message) from exc


def strategy_from(cluster: str, name: str, value: str | None):
    """`value` is the option's argument: an offset, a delta, a date, a duration, CSV text or a group id."""
    simple = {"to-earliest": ToEarliest, "to-latest": ToLatest, "to-current": ToCurrent}
    if name in simple:
        return simple[name]()
    if value is None or str(value).strip() == "":
        raise ConsoleError(MSG_NEEDS_VALUE.format(name=name))
    try:
        if name == "to-offset":
            return ToOffset(int(value))
        if name == "shift-by":
            return ShiftBy(int(value))
    except ValueError as exc:
        raise ConsoleError(f"--{name} takes a whole number, not '{value}'.") from exc
    if name == "to-datetime":
        return ToDatetime(value.strip())
    if name == "by-duration":
        return ByDuration(value.strip())
    if name == "from-file":
        return FromFile(value)
    if name == "from-group":
        source = value.strip()
        offsets = cluster_admin(cluster).group_offsets([source])[source]
        if not offsets:
            raise ConsoleError(f"Consumer group '{source}' has no committed offsets to copy.")
        return FromGroup(offsets=offsets, source_group=source)
    raise ConsoleError(f"Unknown strategy '{name}'.")
