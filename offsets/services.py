"""Changes to consumer groups: offset resets (with their preview's guarantees), revert, delete."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.services import audit_refusal, audited
from console.clusters.selectors import cluster_admin, cluster_connection, cluster_get
from console.kafka.kafka_tools import delete_group_offsets
from console.errors import Conflict, ConsoleError, NotFound
from console.kafka.types import PartitionRef
from offsets.models import GROUP_ID_MAX_STORED
from offsets.planning import AllTopics, Strategy, ToRecorded, TopicScope, describe_strategy
from offsets.selectors import reset_preview

RESET_ACTION = "group.offsets.reset"
MSG_GROUP_ACTIVE = ("Assignments can only be reset if the group '{group}' is inactive, but the current state is "
                    "{state} ({members} member(s)). Stop its consumers first.")
MSG_OFFSETS_MOVED = ("The committed offsets of '{group}' changed since the preview (someone committed or reset "
                     "them). Preview again before executing.")
MSG_CONFIRM_GROUP = "Type the group name '{group}' exactly to confirm."
MSG_REASON = "A reason is required: it goes into the audit log."
MSG_EMPTY_PLAN = "The plan is empty: no partition in this scope has anything to reset."
MSG_GROUP_ID_TOO_LONG = ("Group ids longer than {limit} characters can be read here but not changed: the audit log "
                         "could not name the group. Use Kafka's own tools for this one.")
MSG_NOT_A_RESET = "Audit event #{seq} is not an offset reset; only resets can be reverted."
MSG_NO_BEFORE = "Audit event #{seq} recorded no offsets before the reset, so there is nothing to go back to."


def offsets_json(offsets: dict[PartitionRef, int | None]) -> dict[str, dict[str, int | None]]:
    """{topic: {partition: offset}}: the shape kept in audit events (JSON keys are strings)."""
    shaped: dict[str, dict[str, int | None]] = {}
    for ref, offset in sorted(offsets.items()):
        shaped.setdefault(ref.topic, {})[str(ref.partition)] = offset
    return shaped


def offsets_from_json(shaped: dict) -> dict[PartitionRef, int | None]:
    return {PartitionRef(topic, int(p)): o for topic, parts in (shaped or {}).items() for p, o in parts.items()}


def _check_storable(group: str) -> None:
    if len(group) > GROUP_ID_MAX_STORED:
        raise ConsoleError(MSG_GROUP_ID_TOO_LONG.format(limit=GROUP_ID_MAX_STORED))


def group_offsets_reset(*, actor: Actor, cluster: str, group: str, scope: AllTopics | Sequence[TopicScope],
                        strategy: Strategy, reason: str, confirm: str, expected_fingerprint: str | None = None,
                        revert_of: int | None = None) -> dict:
    """Plans again from the state now, refuses unless the group is Empty or Dead and its offsets did not move since
    the preview, then commits the targets (OffsetCommit as admin), reads them back and audits before and after."""
    _check_storable(group)
    if confirm != group:
        raise ConsoleError(MSG_CONFIRM_GROUP.format(group=group))
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    preview = reset_preview(cluster, group, scope, strategy)
    params = {"strategy": describe_strategy(strategy), "scope": _scope_text(scope),
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
        failed = _delete_offsets(cluster, group, deletions)
        committed = admin.group_offsets([group])[group]
        record.after = offsets_json({ref: committed.get(ref) for ref in touched})
        if failed:
            raise Conflict("Kafka refused to delete some offsets: " + "; ".join(failed))
    return record.after


def _delete_offsets(cluster: str, group: str, refs: list[PartitionRef]) -> list[str]:
    """OffsetDelete through Kafka's own tool, one run per topic (confluent-kafka lacks the call)."""
    by_topic: dict[str, list[int]] = {}
    for ref in refs:
        by_topic.setdefault(ref.topic, []).append(ref.partition)
    failed = []
    for topic, partitions in sorted(by_topic.items()):
        rows = delete_group_offsets(cluster_connection(cluster_get(cluster)), group, topic, sorted(partitions),
                                    timeout=settings.KAFKA_REQUEST_TIMEOUT_S + 7)
        failed += [f"{r.ref or r.topic}: {r.error}" for r in rows if r.error]
    return failed


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
    topics: dict[str, list[int]] = {}
    for ref in recorded:
        topics.setdefault(ref.topic, []).append(ref.partition)
    scope = [TopicScope(topic, tuple(sorted(parts))) for topic, parts in sorted(topics.items())]
    return event, ToRecorded(offsets=recorded), scope


def group_offsets_revert(*, actor: Actor, cluster: str, seq: int, reason: str, confirm: str,
                         expected_fingerprint: str | None = None) -> dict:
    event, strategy, scope = revert_strategy(seq)
    group = event.target.removeprefix("group:")
    return group_offsets_reset(actor=actor, cluster=event.cluster or cluster, group=group, scope=scope,
                               strategy=strategy, reason=reason, confirm=confirm,
                               expected_fingerprint=expected_fingerprint, revert_of=event.seq)


def group_delete(*, actor: Actor, cluster: str, group: str, confirm: str, reason: str) -> None:
    """DeleteGroups, with the group's committed offsets kept in the audit so they can be recreated if needed."""
    _check_storable(group)
    if confirm != group:
        raise ConsoleError(MSG_CONFIRM_GROUP.format(group=group))
    admin = cluster_admin(cluster)
    description = admin.describe_groups([group])[group]
    committed = admin.group_offsets([group])[group]
    if description.state == "Dead" and not committed:
        raise NotFound(f"Consumer group '{group}' does not exist on cluster '{cluster}'.")
    if not description.inactive:
        raise Conflict(MSG_GROUP_ACTIVE.format(group=group, state=description.state,
                                               members=len(description.members)))
    with audited(actor=actor, action="group.delete", cluster=cluster, target=f"group:{group}", reason=reason,
                 before=offsets_json(committed)):
        admin.delete_group(group)


def _scope_text(scope) -> str:
    if isinstance(scope, AllTopics):
        return "--all-topics"
    return " ".join(f"--topic {s.topic}" + (":" + ",".join(map(str, s.partitions)) if s.partitions else "")
                    for s in scope)


MSG_NO_OFFSETS_FOR_TOPIC = "Group '{group}' has no committed offsets for {what}."


def group_offsets_delete_preview(*, cluster: str, group: str, topic: str,
                                 partitions: list[int] | None) -> dict[PartitionRef, int]:
    """The committed offsets that would be deleted."""
    committed = cluster_admin(cluster).group_offsets([group])[group]
    chosen = {ref: o for ref, o in committed.items()
              if ref.topic == topic and (not partitions or ref.partition in partitions)}
    if not chosen:
        what = f"topic '{topic}'" + (f" partitions {partitions}" if partitions else "")
        raise ConsoleError(MSG_NO_OFFSETS_FOR_TOPIC.format(group=group, what=what))
    return chosen


def group_offsets_delete(*, actor: Actor, cluster: str, group: str, topic: str, partitions: list[int] | None,
                         confirm: str, reason: str) -> dict:
    """OffsetDelete (KIP-496) for one topic of a group; the broker refuses it while the group consumes the topic."""
    _check_storable(group)
    if confirm != group:
        raise ConsoleError(MSG_CONFIRM_GROUP.format(group=group))
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    chosen = group_offsets_delete_preview(cluster=cluster, group=group, topic=topic, partitions=partitions)
    with audited(actor=actor, action="group.offsets.delete", cluster=cluster, target=f"group:{group}", reason=reason,
                 params={"topic": topic, "partitions": partitions}, before=offsets_json(chosen)) as record:
        failed = _delete_offsets(cluster, group, list(chosen))
        committed = cluster_admin(cluster).group_offsets([group])[group]
        record.after = offsets_json({ref: committed.get(ref) for ref in chosen})
        if failed:
            raise Conflict("Kafka refused some partitions: " + "; ".join(failed))
    return record.after
