"""Offset resets (with their preview's guarantees) and one-step reverts to an audited "before"."""

from __future__ import annotations

from collections.abc import Sequence

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.services import audit_refusal, audited
from console.clusters.selectors import cluster_admin
from console.errors import Conflict, ConsoleError, NotFound
from offsets import group_table
from offsets.resets.planning import AllTopics, Strategy, ToRecorded, TopicScope, describe_strategy
from offsets.resets.preview import reset_preview
from offsets.services import (
    MSG_CONFIRM_GROUP, MSG_GROUP_ACTIVE, MSG_REASON, check_storable, delete_offsets, offsets_from_json, offsets_json,
    scope_text,
)

RESET_ACTION = "group.offsets.reset"
MSG_OFFSETS_MOVED = ("The committed offsets of '{group}' changed since the preview (someone committed or reset "
                     "them). Preview again before executing.")
MSG_EMPTY_PLAN = "The plan is empty: no partition in this scope has anything to reset."
MSG_NOT_A_RESET = "Audit event #{seq} is not an offset reset; only resets can be reverted."
MSG_NO_BEFORE = "Audit event #{seq} recorded no offsets before the reset, so there is nothing to go back to."


def group_offsets_reset(*, actor: Actor, cluster: str, group: str, scope: AllTopics | Sequence[TopicScope],
                        strategy: Strategy, reason: str, confirm: str, expected_fingerprint: str | None = None,
                        revert_of: int | None = None) -> dict:
    """Plans again from the state now, refuses unless the group is Empty or Dead and its offsets did not move since
    the preview, then commits the targets (OffsetCommit as admin), reads them back and audits before and after."""
    check_storable(group)
    if confirm != group:
        raise ConsoleError(MSG_CONFIRM_GROUP.format(group=group))
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    preview = reset_preview(cluster, group, scope, strategy)
    params = {"strategy": describe_strategy(strategy), "scope": scope_text(scope),
              "targets": offsets_json(preview.plan.targets), "revert_of": revert_of}
    if preview.plan.deletions:
        params["deletes"] = offsets_json({ref: None for ref in preview.plan.deletions})
    target = f"group:{group}"
    if not preview.allowed:
        error = MSG_GROUP_ACTIVE.format(group=group, state=preview.state, members=preview.members)
        audit_refusal(actor=actor, action=RESET_ACTION, cluster=cluster, target=target, reason=reason, params=params,
                      error=error)
        raise Conflict(error)
    if expected_fingerprint is not None and expected_fingerprint != preview.fingerprint:
        error = MSG_OFFSETS_MOVED.format(group=group)
        audit_refusal(actor=actor, action=RESET_ACTION, cluster=cluster, target=target, reason=reason, params=params,
                      error=error)
        raise Conflict(error)
    targets, deletions = preview.plan.targets, preview.plan.deletions
    if not targets and not deletions:
        raise ConsoleError(MSG_EMPTY_PLAN)
    touched = [*targets, *deletions]
    before = offsets_json({ref: preview.committed.get(ref) for ref in touched})
    admin = cluster_admin(cluster)
    with audited(actor=actor, action=RESET_ACTION, cluster=cluster, target=target, reason=reason, params=params,
                 before=before) as record:
        if targets:
            admin.alter_group_offsets(group, targets)
        failed = delete_offsets(cluster, group, deletions)
        committed = admin.group_offsets([group])[group]
        record.after = offsets_json({ref: committed.get(ref) for ref in touched})
        if failed:
            raise Conflict("Kafka refused to delete some offsets: " + "; ".join(failed))
    if preview.state == "Dead" and targets:  # the commit made the group
        group_table.note_created(cluster, group)
    return record.after


def reset_event(seq: int) -> AuditEvent:
    event = AuditEvent.objects.filter(seq=seq).first()
    if event is None:
        raise NotFound(f"There is no audit event #{seq}.")
    if event.action != RESET_ACTION:
        raise ConsoleError(MSG_NOT_A_RESET.format(seq=seq))
    return event


def revert_strategy(seq: int) -> tuple[AuditEvent, ToRecorded, list[TopicScope]]:
    """A reset back to the offsets an earlier reset recorded as "before" (its intent or outcome row)."""
    event = reset_event(seq)
    recorded = offsets_from_json(event.before)  # None where the group had no committed offset: deleted again
    if not recorded:
        raise ConsoleError(MSG_NO_BEFORE.format(seq=seq))
    return event, ToRecorded(offsets=recorded), recorded_scope(recorded)


def recorded_scope(recorded) -> list[TopicScope]:
    """The scope that covers exactly the partitions an audit event recorded."""
    topics: dict[str, list[int]] = {}
    for ref in recorded:
        topics.setdefault(ref.topic, []).append(ref.partition)
    return [TopicScope(topic, tuple(sorted(parts))) for topic, parts in sorted(topics.items())]


def group_offsets_revert(*, actor: Actor, cluster: str, seq: int, reason: str, confirm: str,
                         expected_fingerprint: str | None = None) -> dict:
    event, strategy, scope = revert_strategy(seq)
    group = event.target.removeprefix("group:")
    return group_offsets_reset(actor=actor, cluster=event.cluster or cluster, group=group, scope=scope,
                               strategy=strategy, reason=reason, confirm=confirm,
                               expected_fingerprint=expected_fingerprint, revert_of=event.seq)


