"""The group changes a request can hold: an offset reset of any kind of group (reverts too), and the deletion of a
consumer group's committed offsets or a share group's start offsets for a topic."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from changes.registry import ChangeAction, Plan, fingerprint_of
from console.accounts.roles import Role
from console.clusters.selectors import cluster_admin
from console.errors import Conflict, ConsoleError
from offsets import services as group_services
from offsets.kinds import KIND_NAMED, GroupKind
from offsets.resets import services as resets
from offsets.resets.planning import (
    ALL_TOPICS, AllTopics, ByDuration, FromFile, FromGroup, ShiftBy, Strategy, ToCurrent, ToDatetime, ToEarliest,
    ToLatest, ToOffset, ToRecorded, TopicScope, what_timestamps_needed,
)
from offsets.resets.preview import plan_fingerprint, reset_preview
from offsets.serializers import reset_after_json, reset_preview_json
from offsets.services import offsets_from_json, offsets_json

RESET, OFFSETS_DELETE = "group.offsets.reset", "group.offsets.delete"
SHARE_OFFSETS_DELETE = "share-group.offsets.delete"
MSG_BAD_STRATEGY = "A change request cannot hold the strategy {strategy!r}."
_BARE = {"to-earliest": ToEarliest, "to-latest": ToLatest, "to-current": ToCurrent}


def _kafka_datetime(ms: int) -> str:
    """`--to-datetime`'s text for an instant, in UTC with milliseconds."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def strategy_json(strategy: Strategy, *, now_ms: int) -> dict:
    """The strategy as a request keeps it. --by-duration becomes the instant it meant when asked: run later, the
    same duration would name another instant and another plan."""
    match strategy:
        case ToOffset(offset):
            return {"name": "to-offset", "value": offset}
        case ShiftBy(delta):
            return {"name": "shift-by", "value": delta}
        case ToDatetime(text):
            return {"name": "to-datetime", "value": text}
        case ByDuration():
            return {"name": "to-datetime", "value": _kafka_datetime(what_timestamps_needed(strategy, now_ms))}
        case FromFile(csv_text):
            return {"name": "from-file", "value": csv_text}
        case FromGroup(offsets, source_group):
            return {"name": "from-group", "source_group": source_group, "offsets": offsets_json(offsets)}
        case ToRecorded(offsets):
            return {"name": "to-recorded", "offsets": offsets_json(offsets)}
    for name, cls in _BARE.items():
        if isinstance(strategy, cls):
            return {"name": name}
    raise ConsoleError(MSG_BAD_STRATEGY.format(strategy=strategy))


def strategy_from_json(data: dict) -> Strategy:
    name = data["name"]
    if name in _BARE:
        return _BARE[name]()
    simple = {"to-offset": ToOffset, "shift-by": ShiftBy, "to-datetime": ToDatetime, "from-file": FromFile}
    if name in simple:
        return simple[name](data["value"])
    if name == "from-group":
        return FromGroup(offsets=offsets_from_json(data["offsets"]), source_group=data.get("source_group", ""))
    if name == "to-recorded":
        return ToRecorded(offsets=offsets_from_json(data["offsets"]))
    raise ConsoleError(MSG_BAD_STRATEGY.format(strategy=name))


def scope_json(scope: AllTopics | list[TopicScope]) -> dict:
    if isinstance(scope, AllTopics):
        return {"all_topics": True}
    return {"topics": [[s.topic, list(s.partitions) if s.partitions else None] for s in scope]}


def scope_from_json(data: dict) -> AllTopics | list[TopicScope]:
    if data.get("all_topics"):
        return ALL_TOPICS
    return [TopicScope(topic, tuple(parts) if parts else None) for topic, parts in data["topics"]]


def reset_kwargs(*, group: str, kind: GroupKind, scope, strategy: Strategy, revert_of: int | None = None,
                 now_ms: int | None = None) -> dict:
    """What a request keeps of a reset, to plan and run it again."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return {"group": group, "kind": kind.name, "scope": scope_json(scope),
            "strategy": strategy_json(strategy, now_ms=now_ms), "revert_of": revert_of}


def _reset_parts(kwargs: dict):
    return KIND_NAMED[kwargs["kind"]], scope_from_json(kwargs["scope"]), strategy_from_json(kwargs["strategy"])


def _reset_plan(cluster: str, kwargs: dict) -> Plan:
    kind, scope, strategy = _reset_parts(kwargs)
    group = kwargs["group"]
    preview = reset_preview(cluster, group, scope, strategy, kind=kind)
    if not preview.allowed or preview.members:
        raise Conflict(kind.msg_active.format(group=group, state=preview.state, members=preview.members))
    if not preview.plan.rows:
        raise ConsoleError(kind.msg_empty_plan)
    return Plan(summary={**reset_preview_json(preview, kind=kind), "revert_of": kwargs.get("revert_of")},
                fingerprint=plan_fingerprint(preview))


def _reset_run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    kind, scope, strategy = _reset_parts(kwargs)
    group = kwargs["group"]
    after = resets.group_offsets_reset(actor=actor, cluster=cluster, group=group, scope=scope, strategy=strategy,
                                       reason=reason, confirm=group, revert_of=kwargs.get("revert_of"), kind=kind,
                                       expected_plan=fingerprint)
    return reset_after_json(after)


def offsets_delete_kwargs(*, group: str, topic: str, partitions: list[int] | None) -> dict:
    return {"group": group, "topic": topic, "partitions": partitions}


def _delete_plan(cluster: str, kwargs: dict) -> Plan:
    chosen = group_services.group_offsets_delete_preview(cluster=cluster, group=kwargs["group"],
                                                         topic=kwargs["topic"], partitions=kwargs["partitions"])
    rows = [{"topic": ref.topic, "partition": ref.partition, "current": offset}
            for ref, offset in sorted(chosen.items())]
    return Plan(summary={"group": kwargs["group"], "partitions": rows}, fingerprint=fingerprint_of(rows))


def _delete_run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    return group_services.group_offsets_delete(actor=actor, cluster=cluster, group=kwargs["group"],
                                               topic=kwargs["topic"], partitions=kwargs["partitions"],
                                               confirm=kwargs["group"], reason=reason)


def _share_delete_plan(cluster: str, kwargs: dict) -> Plan:
    group, topic = kwargs["group"], kwargs["topic"]
    starts = cluster_admin(cluster).share_group_offsets([group]).get(group, {})
    rows = [{"topic": ref.topic, "partition": ref.partition, "current": o.start_offset}
            for ref, o in sorted(starts.items()) if ref.topic == topic]
    return Plan(summary={"group": group, "partitions": rows}, fingerprint=fingerprint_of(rows))


def _share_delete_run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    group_services.share_offsets_delete(actor=actor, cluster=cluster, group=kwargs["group"], topic=kwargs["topic"],
                                        confirm=kwargs["group"], reason=reason)
    return {}


def _group(kwargs: dict) -> str:
    return f"group:{kwargs['group']}"


ACTIONS = (
    ChangeAction(RESET, "offset reset", Role.OPERATOR, _group, _reset_plan, _reset_run),
    ChangeAction(OFFSETS_DELETE, "deletion of committed offsets", Role.ADMIN, _group, _delete_plan, _delete_run),
    ChangeAction(SHARE_OFFSETS_DELETE, "deletion of a share group's start offsets", Role.ADMIN, _group,
                 _share_delete_plan, _share_delete_run),
)
