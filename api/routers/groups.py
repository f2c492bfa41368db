"""Consumer groups of every kind (consumer, classic, share, streams): the list, a group's offsets and lag, its lag
history and status with reasons, its rebalance history, why it lags; and offset resets, previewed with a
fingerprint that the execution must give back (the shell's --if-unchanged)."""

from __future__ import annotations

from typing import Literal

from ninja import Query, Router, Schema, Status
from pydantic import Field

from api.access import allow
from api.pagination import page_after
from api.schemas import PROBLEMS, REASON, Page, limit_field
from changes.actions.offsets import OFFSETS_DELETE, RESET, SHARE_OFFSETS_DELETE, offsets_delete_kwargs, reset_kwargs
from changes.proposals import propose_if_protected
from changes.serializers import change_json
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.audit.guarded import change_checked
from console.errors import ConsoleError
from offsets.history.selectors import group_history
from offsets import services as group_services
from offsets.kinds import kind_for
from offsets.kinds.share import SHARE
from offsets.lag.explain import group_lag_explain
from offsets.lag.selectors import RANGES, group_lag_history, group_statuses
from offsets.resets import services as resets
from offsets.resets.preview import reset_preview
from offsets.resets.strategy_input import STRATEGIES, scope_from, strategy_from
from offsets.selectors import groups_of_every_type
from offsets.selectors_describe import groups_list
from offsets.serializers import (
    group_describe_json, group_listings_json, group_status_json, reset_after_json, reset_preview_json,
)

router = Router(tags=["consumer groups"])
MSG_FINGERPRINT = ("Executing a reset takes the fingerprint of its preview (POST .../reset/preview), as the shell's "
                   "--if-unchanged does: the reset is refused if the group's offsets moved since.")
MSG_REVERT_TARGET = "Audit event #{seq} reset {target}, not group:{group}."


class GroupListQuery(Schema):
    all_types: bool = Field(False, description="share and streams groups too (ListGroups of every type)")
    cursor: str | None = None
    limit: int = limit_field()


@router.get("/clusters/{cluster}/groups", response={200: Page, **PROBLEMS}, summary="List groups")
def group_list(request, cluster: str, query: Query[GroupListQuery]):
    """`manage.py groups list [--all-types] --format json`, by group id, a page at a time."""
    allow(request, cluster=cluster)
    if query.all_types:
        groups, problem = groups_of_every_type(cluster)
        if problem:
            raise ConsoleError(problem)
    else:
        groups = groups_list(cluster)
    groups = sorted(groups, key=lambda g: g.group_id)
    return page_after(group_listings_json(groups), key=lambda g: g["group"], cursor=query.cursor, limit=query.limit)


@router.get("/clusters/{cluster}/groups/{kafka_name:group}", response={200: dict | list, **PROBLEMS},
            summary="Describe a group")
def group_describe(request, cluster: str, group: str, view: Literal["offsets", "members", "state"] = "offsets"):
    """`manage.py groups describe [--members|--state] --format json`, for a group of any kind: its partitions with
    committed offset, log end and lag (the default), its members, or its state. A name with '/' or '~' in it is
    written with ~2F and ~7E, as in the console's own addresses."""
    allow(request, cluster=cluster)
    return group_describe_json(cluster, group, members=view == "members", state=view == "state")


@router.get("/clusters/{cluster}/groups/{kafka_name:group}/lag", response={200: dict, **PROBLEMS},
            summary="A group's lag history and status")
def group_lag(request, cluster: str, group: str, range: Literal[tuple(RANGES)] = "6h"):  # noqa: A002
    """`manage.py lag_history --format json`: the lag samples per topic over the range, oldest first, and the
    current status (OK, WARN, ERR, STOP, BLOCKED) with its reason."""
    allow(request, cluster=cluster)
    return group_lag_history(cluster, group, range)


@router.get("/clusters/{cluster}/groups/{kafka_name:group}/status", response={200: dict, **PROBLEMS},
            summary="A group's lag status")
def group_status(request, cluster: str, group: str):
    """The last lag sweep's verdict with its reason, and each partition's that is not OK."""
    allow(request, cluster=cluster)
    return group_status_json(group, group_statuses(cluster, group=group).get(group))


@router.get("/clusters/{cluster}/groups/{kafka_name:group}/history", response={200: list[dict], **PROBLEMS},
            summary="A group's rebalance history")
def group_rebalances(request, cluster: str, group: str):
    """`manage.py group_history --format json`: generations (classic) or epochs (consumer), oldest first, with who
    joined, who left, how many partitions moved, bursts, and how long each consumer-protocol epoch took to settle."""
    allow(request, cluster=cluster)
    return group_history(cluster, group)


@router.get("/clusters/{cluster}/groups/{kafka_name:group}/explain", response={200: dict, **PROBLEMS},
            summary="Why a group lags")
def group_explain(request, cluster: str, group: str):
    """The group's status and its reasons, the consume and produce rates, where the lag sits now (skew), its
    rebalances of the last hour and the console's changes to it, each finding with its evidence."""
    allow(request, cluster=cluster)
    return group_lag_explain(cluster, group)


class Scope(Schema):
    all_topics: bool = Field(False, description="every topic the group has committed offsets on (--all-topics)")
    topics: list[str] = Field(default_factory=list, description="TOPIC or TOPIC:P,P (--topic)")


class Strategy(Schema):
    name: Literal[tuple([*STRATEGIES, "revert"])] = Field(description="the shell's --<strategy> option")
    value: str | None = Field(None, description="its argument: an offset, a delta, a date, a duration, CSV text "
                                                "(from-file), a group id (from-group) or an audit event (revert)")


class ResetPreview(Schema):
    scope: Scope = Field(default_factory=Scope)
    strategy: Strategy


class ResetExecute(ResetPreview):
    fingerprint: str = Field(min_length=1, description="the preview's fingerprint: refused if the offsets moved")
    reason: str = REASON


def _plan_input(cluster: str, group: str, body: ResetPreview):
    kind = kind_for(cluster, group)
    if body.strategy.name == "revert":
        try:
            seq = int(body.strategy.value or "")
        except ValueError as exc:
            raise ConsoleError("A revert names the audit event of the reset to undo.", field="strategy.value") from exc
        event, strategy, scope = resets.revert_strategy(seq, kind)
        if event.target != f"group:{group}":
            raise ConsoleError(MSG_REVERT_TARGET.format(seq=event.seq, target=event.target, group=group))
        return kind, scope, strategy, seq
    scope = [] if body.strategy.name == "from-file" else scope_from(body.scope.all_topics, body.scope.topics)
    return kind, scope, strategy_from(cluster, body.strategy.name, body.strategy.value), None


@router.post("/clusters/{cluster}/groups/{kafka_name:group}/reset/preview", response={200: dict, **PROBLEMS},
             summary="Preview an offset reset")
def group_reset_preview(request, cluster: str, group: str, body: ResetPreview):
    """`manage.py reset_offsets --dry-run --format json`: per partition the committed offset, the target, the delta
    and how many records would be skipped or read again; `fingerprint` for the execution; `refusal` says why an
    execution would be refused now (the group has members)."""
    allow(request, cluster=cluster)
    kind, scope, strategy, _ = _plan_input(cluster, group, body)
    return reset_preview_json(reset_preview(cluster, group, scope, strategy, kind=kind), kind=kind)


@router.post("/clusters/{cluster}/groups/{kafka_name:group}/reset",
             response={200: list[dict], 202: dict, **PROBLEMS}, summary="Execute an offset reset")
def group_reset(request, cluster: str, group: str, body: ResetExecute):
    """`manage.py reset_offsets --execute --if-unchanged FINGERPRINT --format json` (operator): planned again from
    the state now, refused (409, audited, nothing changed) while the group has members or if its offsets moved
    since the preview; returns the offsets read back from Kafka. On a protected group: 202 and the change request
    made instead (GET /changes/{id}), which runs once another person approves it."""
    allow(request, role=Role.OPERATOR, cluster=cluster, write=True)
    if not body.fingerprint.strip():
        raise ConsoleError(MSG_FINGERPRINT, field="fingerprint")
    kind, scope, strategy, revert_of = _plan_input(cluster, group, body)
    change = propose_if_protected(actor=Actor.from_request(request), action=RESET, cluster=cluster,
                                  reason=body.reason, kwargs=reset_kwargs(group=group, kind=kind, scope=scope,
                                                                         strategy=strategy, revert_of=revert_of))
    if change is not None:
        return Status(202, change_json(change))
    after = resets.group_offsets_reset(actor=Actor.from_request(request), cluster=cluster, group=group, scope=scope,
                                       strategy=strategy, reason=body.reason, confirm=group,
                                       expected_fingerprint=body.fingerprint, revert_of=revert_of, kind=kind)
    return reset_after_json(after)


class OffsetsDeleteScope(Schema):
    topic: str = Field(min_length=1, max_length=249)
    partitions: list[int] | None = Field(None, description="default: every partition of the topic the group has "
                                                           "offsets for (share groups: the whole topic only)")


class OffsetsDelete(OffsetsDeleteScope):
    confirm: str = Field(description="the group's id again")
    reason: str = REASON


MSG_SHARE_WHOLE_TOPIC = "A share group's start offsets are deleted for a whole topic: leave partitions out."


def _offsets_to_delete(cluster: str, group: str, body: OffsetsDeleteScope) -> tuple[bool, list[dict]]:
    """(whether the group is a share group, the offsets a deletion would remove: topic, partition, current)."""
    if kind_for(cluster, group) is SHARE:
        if body.partitions:
            raise ConsoleError(MSG_SHARE_WHOLE_TOPIC, field="partitions")
        starts = [p for p in SHARE.detail(cluster, group).partitions if p.ref.topic == body.topic]
        if not starts:
            raise ConsoleError(f"Share group '{group}' has no start offsets in topic '{body.topic}'.", field="topic")
        return True, [{"topic": p.ref.topic, "partition": p.ref.partition, "current": p.start_offset}
                      for p in sorted(starts, key=lambda p: p.ref)]
    chosen = group_services.group_offsets_delete_preview(cluster=cluster, group=group, topic=body.topic,
                                                         partitions=body.partitions)
    return False, [{"topic": ref.topic, "partition": ref.partition, "current": offset}
                   for ref, offset in sorted(chosen.items())]


@router.post("/clusters/{cluster}/groups/{kafka_name:group}/offsets/delete/preview",
             response={200: dict, **PROBLEMS}, summary="Preview deleting a group's offsets for a topic")
def group_offsets_delete_preview(request, cluster: str, group: str, body: OffsetsDeleteScope):
    """What `manage.py groups delete-offsets` without --yes lists (admin, as on the group page): the committed
    offsets (a share group's start offsets) the deletion would remove."""
    allow(request, role=Role.ADMIN, cluster=cluster)
    _, rows = _offsets_to_delete(cluster, group, body)
    return {"group": group, "partitions": rows}


@router.post("/clusters/{cluster}/groups/{kafka_name:group}/offsets/delete",
             response={200: dict, 202: dict, **PROBLEMS}, summary="Delete a group's offsets for a topic")
def group_offsets_delete(request, cluster: str, group: str, body: OffsetsDelete):
    """`manage.py groups delete-offsets --yes` (admin), confirmed by the group's id: OffsetDelete (KIP-496), which
    the broker refuses while the group consumes the topic, or DeleteShareGroupOffsets for a share group; audited
    with the offsets removed. On a protected group: 202 and the change request made instead."""
    allow(request, role=Role.ADMIN, cluster=cluster, write=True)
    actor = Actor.from_request(request)
    share, rows = _offsets_to_delete(cluster, group, body)
    change_checked(confirm=body.confirm, name=group, what="group", reason=body.reason,
                   message=group_services.MSG_CONFIRM_GROUP.format(group=group))
    action, kwargs = ((SHARE_OFFSETS_DELETE, {"group": group, "topic": body.topic}) if share else
                      (OFFSETS_DELETE, offsets_delete_kwargs(group=group, topic=body.topic,
                                                            partitions=body.partitions)))
    change = propose_if_protected(actor=actor, action=action, cluster=cluster, reason=body.reason, kwargs=kwargs)
    if change is not None:
        return Status(202, change_json(change))
    if share:
        group_services.share_offsets_delete(actor=actor, cluster=cluster, group=group, topic=body.topic,
                                            confirm=body.confirm, reason=body.reason)
    else:
        group_services.group_offsets_delete(actor=actor, cluster=cluster, group=group, topic=body.topic,
                                            partitions=body.partitions, confirm=body.confirm, reason=body.reason)
    return {"group": group, "deleted": rows}
