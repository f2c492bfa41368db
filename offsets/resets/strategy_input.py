"""Turns what a person typed (shell options or form fields) into a planner scope and strategy."""

from __future__ import annotations

import difflib

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
MSG_SOURCE_UNKNOWN = "Consumer group '{source}' does not exist on cluster '{cluster}'."
MSG_SOURCE_SUGGESTIONS = " The closest names: {names}."
MSG_SOURCE_EMPTY = "Consumer group '{source}' exists but has no committed offsets to copy."
SUGGESTIONS = 5


def closest_names(typed: str, names: list[str], *, most: int = SUGGESTIONS) -> list[str]:
    """The names most like `typed`: those holding it (any case) first, shortest first, then difflib's closest."""
    folded = typed.casefold()
    holding = sorted((n for n in names if folded and folded in n.casefold() and n != typed), key=lambda n: (len(n), n))
    alike = difflib.get_close_matches(typed, [n for n in names if n != typed], n=most, cutoff=0.5)
    return list(dict.fromkeys(holding + alike))[:most]


def _from_group(cluster: str, source: str) -> FromGroup:
    """Another consumer group's committed offsets. A name Kafka does not know (no members, no commits) is named as
    such, with the cluster's closest group ids; one that exists but committed nothing says that."""
    admin = cluster_admin(cluster)
    offsets = admin.group_offsets([source])[source]
    if offsets:
        return FromGroup(offsets=offsets, source_group=source)
    if admin.describe_groups([source])[source].state != "Dead":
        raise ConsoleError(MSG_SOURCE_EMPTY.format(source=source), field="source_group")
    names = closest_names(source, [g.group_id for g in admin.list_groups()])
    message = MSG_SOURCE_UNKNOWN.format(source=source, cluster=cluster)
    if names:
        message += MSG_SOURCE_SUGGESTIONS.format(names=", ".join(f"'{n}'" for n in names))
    raise ConsoleError(message, field="source_group")


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
        return _from_group(cluster, value.strip())
    raise ConsoleError(f"Unknown strategy '{name}'.")
