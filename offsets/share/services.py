"""Changes to share groups: reset start offsets (previewed, refused while the group has members, audited,
revertible in one step), delete a topic's start offsets, delete the group."""

from __future__ import annotations

from collections.abc import Sequence

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.services import audit_refusal, audited
from console.clusters.selectors import cluster_admin
from console.errors import Conflict, ConsoleError, NotFound
from offsets import group_table
from offsets.resets.planning import AllTopics, Strategy, ToRecorded, TopicScope, describe_strategy
from offsets.resets.services import recorded_scope
from offsets.services import (
    MSG_CONFIRM_GROUP, MSG_REASON, check_storable, offsets_from_json, offsets_json, scope_text,
)
from offsets.share.selectors import share_reset_preview

RESET_ACTION = "share-group.offsets.reset"
MSG_SHARE_ACTIVE = ("Share group '{group}' has {members} member(s) (state {state}): Kafka resets start offsets only "
                    "while a share group has none. Stop its consumers first.")
MSG_MOVED = "The start offsets of '{group}' changed since the preview. Preview again before executing."
MSG_EMPTY = "The plan is empty: no partition in this scope has a start offset to reset."
MSG_NOT_A_SHARE_RESET = "Audit event #{seq} is not a share-group reset; only those revert here."
MSG_NO_BEFORE = "Audit event #{seq} recorded no start offsets before the reset, so there is nothing to go back to."


def share_offsets_reset(*, actor: Actor, cluster: str, group: str, scope: AllTopics | Sequence[TopicScope],
                        strategy: Strategy, reason: str, confirm: str, expected_fingerprint: str | None = None,
                        revert_of: int | None = None) -> dict:
    """Plans again from the state now; refuses unless the group has no members and its start offsets did not
    move since the preview; then alters them (AlterShareGroupOffsets), reads them back, audits before and after."""
    check_storable(group)
    if confirm != group:
        raise ConsoleError(MSG_CONFIRM_GROUP.format(group=group))
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    preview = share_reset_preview(cluster, group, scope, strategy)
    targets = preview.plan.targets
    params = {"strategy": describe_strategy(strategy), "scope": scope_text(scope), "targets": offsets_json(targets),
              "revert_of": revert_of}
    target = f"group:{group}"
    refusal = None
    if not preview.allowed or preview.members:
        refusal = MSG_SHARE_ACTIVE.format(group=group, members=preview.members, state=preview.state)
    elif expected_fingerprint is not None and expected_fingerprint != preview.fingerprint:
        refusal = MSG_MOVED.format(group=group)
    if refusal:
        audit_refusal(actor=actor, action=RESET_ACTION, cluster=cluster, target=target, reason=reason, params=params,
                      error=refusal)
        raise Conflict(refusal)
    if not targets:
        raise ConsoleError(MSG_EMPTY)
    before = offsets_json({ref: preview.starts.get(ref) for ref in targets})
    admin = cluster_admin(cluster)
    with audited(actor=actor, action=RESET_ACTION, cluster=cluster, target=target, reason=reason, params=params,
                 before=before) as record:
        admin.alter_share_group_offsets(group, targets)
        now = admin.share_group_offsets([group]).get(group, {})
        record.after = offsets_json({ref: now[ref].start_offset if ref in now else None for ref in targets})
    return record.after


def share_revert_strategy(seq: int) -> tuple[AuditEvent, ToRecorded, list[TopicScope]]:
    event = AuditEvent.objects.filter(seq=seq).first()
    if event is None:
        raise NotFound(f"There is no audit event #{seq}.")
    if event.action != RESET_ACTION:
        raise ConsoleError(MSG_NOT_A_SHARE_RESET.format(seq=seq))
    recorded = {ref: o for ref, o in offsets_from_json(event.before).items() if o is not None}
    if not recorded:
        raise ConsoleError(MSG_NO_BEFORE.format(seq=seq))
    return event, ToRecorded(offsets=recorded), recorded_scope(recorded)


def share_offsets_revert(*, actor: Actor, cluster: str, seq: int, reason: str, confirm: str,
                         expected_fingerprint: str | None = None) -> dict:
    event, strategy, scope = share_revert_strategy(seq)
    return share_offsets_reset(actor=actor, cluster=event.cluster or cluster, group=event.target.removeprefix("group:"),
                               scope=scope, strategy=strategy, reason=reason, confirm=confirm,
                               expected_fingerprint=expected_fingerprint, revert_of=event.seq)


def share_offsets_delete(*, actor: Actor, cluster: str, group: str, topic: str, confirm: str, reason: str) -> None:
    """DeleteShareGroupOffsets for one topic; the start offsets go into the audit."""
    check_storable(group)
    if confirm != group:
        raise ConsoleError(MSG_CONFIRM_GROUP.format(group=group))
    admin = cluster_admin(cluster)
    before = {ref: o.start_offset for ref, o in admin.share_group_offsets([group]).get(group, {}).items()
              if ref.topic == topic}
    with audited(actor=actor, action="share-group.offsets.delete", cluster=cluster, target=f"group:{group}",
                 reason=reason, params={"topic": topic}, before=offsets_json(before)) as record:
        admin.delete_share_group_offsets(group, [topic])
        record.after = {}


def share_group_delete(*, actor: Actor, cluster: str, group: str, confirm: str, reason: str) -> None:
    check_storable(group)
    if confirm != group:
        raise ConsoleError(MSG_CONFIRM_GROUP.format(group=group))
    admin = cluster_admin(cluster)
    before = {ref: o.start_offset for ref, o in admin.share_group_offsets([group]).get(group, {}).items()}
    with audited(actor=actor, action="share-group.delete", cluster=cluster, target=f"group:{group}", reason=reason,
                 before=offsets_json(before)) as record:
        admin.delete_share_groups([group])
        record.after = {}
    group_table.note_deleted(cluster, group)


