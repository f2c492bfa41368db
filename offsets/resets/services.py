"""Offset resets of every kind of group (with their preview's guarantees) and one-step reverts to an audited
"before". The kind decides what is read and written and the words of a refusal; the guarantees are the same."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from changes.guard import change_guard
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.guarded import change_checked, guarded_change, refuse_if
from console.errors import Conflict, ConsoleError, NotFound
from offsets import group_table
from offsets.kinds import CONSUMER, GroupKind, kind_for, kind_of_reset
from offsets.lag.recheck import lag_recheck_group
from offsets.resets.planning import AllTopics, Strategy, ToRecorded, TopicScope, describe_strategy
from offsets.resets.preview import plan_fingerprint, reset_preview
from offsets.services import MSG_CONFIRM_GROUP, check_storable, offsets_from_json, offsets_json, scope_text

MSG_DELETES_REFUSED = "Kafka refused to delete some offsets: "
MSG_PLAN_MOVED = ("The plan for '{group}' changed since it was previewed (its positions or the log offsets it targets "
                  "moved): preview it again.")


def group_offsets_reset(*, actor: Actor, cluster: str, group: str, scope: AllTopics | Sequence[TopicScope],
                        strategy: Strategy, reason: str, confirm: str, expected_fingerprint: str | None = None,
                        revert_of: int | None = None, kind: GroupKind | None = None,
                        on_audit: Callable[[uuid.UUID], None] | None = None,
                        expected_plan: str | None = None) -> dict:
    """Plans again from the state now, refuses unless the group has no members (Empty or Dead) and its positions
    did not move since the preview, then commits the targets as admin (OffsetCommit, AlterShareGroupOffsets or
    AlterStreamsGroupOffsets), deletes those the plan deletes, reads them back and audits before and after; then
    samples the group's lag again, so its status is judged on the new offsets at once (offsets/lag/recheck.py).
    Without `kind`, the group's kind is looked up. `on_audit` is told the audit's correlation id. On a protected
    group it runs only as an approved change request, which passes `expected_plan` (the whole plan's fingerprint)."""
    check_storable(group)
    change_checked(confirm=confirm, name=group, what="group", reason=reason,
                   message=MSG_CONFIRM_GROUP.format(group=group))
    kind = kind or kind_for(cluster, group)
    change_guard(actor=actor, action=kind.reset_action, cluster=cluster, target=f"group:{group}", reason=reason,
                 params={"strategy": describe_strategy(strategy), "scope": scope_text(scope)})
    preview = reset_preview(cluster, group, scope, strategy, kind=kind)
    targets, deletions = preview.plan.targets, preview.plan.deletions
    params = {"strategy": describe_strategy(strategy), "scope": scope_text(scope), "targets": offsets_json(targets),
              "revert_of": revert_of}
    if deletions:
        params["deletes"] = offsets_json({ref: None for ref in deletions})
    target = f"group:{group}"
    refusal = None
    if not preview.allowed or preview.members:
        refusal = kind.msg_active.format(group=group, state=preview.state, members=preview.members)
    elif expected_fingerprint is not None and expected_fingerprint != preview.fingerprint:
        refusal = kind.msg_moved.format(group=group)
    elif expected_plan is not None and expected_plan != plan_fingerprint(preview):
        refusal = MSG_PLAN_MOVED.format(group=group)
    refuse_if(refusal or "", actor=actor, action=kind.reset_action, cluster=cluster, target=target, reason=reason,
              params=params)
    if not targets and not deletions:
        raise ConsoleError(kind.msg_empty_plan)
    touched = [*targets, *deletions]
    before = offsets_json({ref: preview.committed.get(ref) for ref in touched})
    with guarded_change(actor=actor, action=kind.reset_action, cluster=cluster, target=target, reason=reason,
                        params=params, before=before) as record:
        if on_audit is not None:
            on_audit(record.intent.correlation_id)
        if targets:
            kind.alter(cluster, group, targets)
        failed = kind.delete_positions(cluster, group, deletions) if deletions else []
        now = kind.positions(cluster, group)
        record.after = offsets_json({ref: now.get(ref) for ref in touched})
        if failed:
            raise Conflict(MSG_DELETES_REFUSED + "; ".join(failed))
    if kind.creates_group_on_commit and preview.state == "Dead" and targets:
        group_table.note_created(cluster, group)
    lag_recheck_group(cluster=cluster, group=group, kind=kind)
    return record.after


def reset_event(seq: int, kind: GroupKind = CONSUMER) -> AuditEvent:
    """Audit event `seq`, which must be a reset of `kind`."""
    event = AuditEvent.objects.filter(seq=seq).first()
    if event is None:
        raise NotFound(f"There is no audit event #{seq}.")
    if event.action != kind.reset_action:
        raise ConsoleError(kind.msg_not_a_reset.format(seq=seq))
    return event


def revert_strategy(seq: int, kind: GroupKind | None = None) -> tuple[AuditEvent, ToRecorded, list[TopicScope]]:
    """A reset back to the positions an earlier reset recorded as "before" (its intent or outcome row). Without
    `kind`, the kind whose reset the event records."""
    if kind is None:
        action = AuditEvent.objects.filter(seq=seq).values_list("action", flat=True).first()
        kind = kind_of_reset(action or "") or CONSUMER
    event = reset_event(seq, kind)
    recorded = offsets_from_json(event.before)  # None where the group had no position: deleted again
    if not kind.reverts_deletions:
        recorded = {ref: offset for ref, offset in recorded.items() if offset is not None}
    if not recorded:
        raise ConsoleError(kind.msg_no_before.format(seq=seq))
    return event, ToRecorded(offsets=recorded), recorded_scope(recorded)


def recorded_scope(recorded) -> list[TopicScope]:
    """The scope that covers exactly the partitions an audit event recorded."""
    topics: dict[str, list[int]] = {}
    for ref in recorded:
        topics.setdefault(ref.topic, []).append(ref.partition)
    return [TopicScope(topic, tuple(sorted(parts))) for topic, parts in sorted(topics.items())]


def group_offsets_revert(*, actor: Actor, cluster: str, seq: int, reason: str, confirm: str,
                         expected_fingerprint: str | None = None, kind: GroupKind | None = None,
                         on_audit: Callable[[uuid.UUID], None] | None = None) -> dict:
    """A reset to audit event `seq`'s "before" positions (see `revert_strategy`)."""
    event, strategy, scope = revert_strategy(seq, kind)
    kind = kind or kind_of_reset(event.action)
    return group_offsets_reset(actor=actor, cluster=event.cluster or cluster, group=event.target.removeprefix("group:"),
                               scope=scope, strategy=strategy, reason=reason, confirm=confirm,
                               expected_fingerprint=expected_fingerprint, revert_of=event.seq, kind=kind,
                               on_audit=on_audit)
