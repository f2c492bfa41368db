"""Changes to streams groups: reset committed offsets of input topics (previewed, refused while the group has
members, audited, revertible in one step), delete a topic's offsets, delete the group."""

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
from offsets.streams.selectors import streams_reset_preview

RESET_ACTION = "streams-group.offsets.reset"
MSG_STREAMS_ACTIVE = ("Streams group '{group}' has {members} member(s) (state {state}): Kafka resets a streams "
                      "group's offsets only while its application instances are stopped. Stop them first.")
MSG_MOVED = ("The committed offsets of '{group}' changed since the preview. Preview again before executing.")
MSG_EMPTY = "The plan is empty: no partition in this scope has anything to reset."
MSG_NOT_A_STREAMS_RESET = "Audit event #{seq} is not a streams-group reset; only those revert here."
MSG_NO_BEFORE = "Audit event #{seq} recorded no offsets before the reset, so there is nothing to go back to."


def streams_offsets_reset(*, actor: Actor, cluster: str, group: str, scope: AllTopics | Sequence[TopicScope],
                          strategy: Strategy, reason: str, confirm: str, expected_fingerprint: str | None = None,
                          revert_of: int | None = None) -> dict:
    """Plans again from the state now; refuses unless the group has no members and its offsets did not move since
    the preview; then alters them (AlterStreamsGroupOffsets) and deletes those the plan deletes, reads them back,
    audits before and after. Internal topics (changelogs, repartition topics) are kept, as the tool keeps them
    without --delete-all-internal-topics."""
    check_storable(group)
    if confirm != group:
        raise ConsoleError(MSG_CONFIRM_GROUP.format(group=group))
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    preview = streams_reset_preview(cluster, group, scope, strategy)
    targets, deletions = preview.plan.targets, preview.plan.deletions
    params = {"strategy": describe_strategy(strategy), "scope": scope_text(scope), "targets": offsets_json(targets),
              "revert_of": revert_of}
    if deletions:
        params["deletes"] = offsets_json({ref: None for ref in deletions})
    target = f"group:{group}"
    refusal = None
    if not preview.allowed or preview.members:
        refusal = MSG_STREAMS_ACTIVE.format(group=group, members=preview.members, state=preview.state)
    elif expected_fingerprint is not None and expected_fingerprint != preview.fingerprint:
        refusal = MSG_MOVED.format(group=group)
    if refusal:
        audit_refusal(actor=actor, action=RESET_ACTION, cluster=cluster, target=target, reason=reason, params=params,
                      error=refusal)
        raise Conflict(refusal)
    if not targets and not deletions:
        raise ConsoleError(MSG_EMPTY)
    touched = [*targets, *deletions]
    before = offsets_json({ref: preview.committed.get(ref) for ref in touched})
    admin = cluster_admin(cluster)
    with audited(actor=actor, action=RESET_ACTION, cluster=cluster, target=target, reason=reason, params=params,
                 before=before) as record:
        if targets:
            admin.alter_streams_group_offsets(group, targets)
        if deletions:
            admin.delete_streams_group_offsets(group, deletions)
        now = admin.streams_group_offsets([group]).get(group, {})
        record.after = offsets_json({ref: now.get(ref) for ref in touched})
    return record.after


def streams_revert_strategy(seq: int) -> tuple[AuditEvent, ToRecorded, list[TopicScope]]:
    event = AuditEvent.objects.filter(seq=seq).first()
    if event is None:
        raise NotFound(f"There is no audit event #{seq}.")
    if event.action != RESET_ACTION:
        raise ConsoleError(MSG_NOT_A_STREAMS_RESET.format(seq=seq))
    recorded = offsets_from_json(event.before)  # None where the group had no offset: deleted again
    if not recorded:
        raise ConsoleError(MSG_NO_BEFORE.format(seq=seq))
    return event, ToRecorded(offsets=recorded), recorded_scope(recorded)


def streams_offsets_revert(*, actor: Actor, cluster: str, seq: int, reason: str, confirm: str,
                           expected_fingerprint: str | None = None) -> dict:
    event, strategy, scope = streams_revert_strategy(seq)
    return streams_offsets_reset(actor=actor, cluster=event.cluster or cluster,
                                 group=event.target.removeprefix("group:"), scope=scope, strategy=strategy,
                                 reason=reason, confirm=confirm, expected_fingerprint=expected_fingerprint,
                                 revert_of=event.seq)


def streams_group_delete(*, actor: Actor, cluster: str, group: str, confirm: str, reason: str) -> None:
    """DeleteGroups for a streams group (Kafka refuses while it has members); its offsets go into the audit."""
    check_storable(group)
    if confirm != group:
        raise ConsoleError(MSG_CONFIRM_GROUP.format(group=group))
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    admin = cluster_admin(cluster)
    before = admin.streams_group_offsets([group]).get(group, {})
    with audited(actor=actor, action="streams-group.delete", cluster=cluster, target=f"group:{group}",
                 reason=reason, before=offsets_json(before)) as record:
        admin.delete_streams_groups([group])
        record.after = {}
    group_table.note_deleted(cluster, group)
