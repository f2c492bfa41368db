"""Changes to groups: delete a group of any kind, a consumer group's offsets or a share group's start offsets
(offset resets and reverts: offsets.resets.services)."""

from __future__ import annotations

from changes.guard import change_guard
from console.audit.actor import Actor
from console.audit.guarded import MSG_REASON, change_checked, guarded_change  # noqa: F401 - MSG_REASON: importers
from console.clusters.selectors import cluster_admin
from console.errors import Conflict, ConsoleError
from gateway.kafka.types import PartitionRef
from offsets import group_table
from offsets.kinds import CONSUMER, GroupKind, kind_for
from offsets.kinds.consumer import delete_offsets
from offsets.lag.recheck import lag_recheck_group
from offsets.models import GROUP_ID_MAX_STORED
from offsets.resets.planning import AllTopics

MSG_CONFIRM_GROUP = "Type the group name '{group}' exactly to confirm."
MSG_GROUP_ID_TOO_LONG = ("Group ids longer than {limit} characters can be read here but not changed: the audit log "
                         "could not name the group. Use Kafka's own tools for this one.")


def offsets_json(offsets: dict[PartitionRef, int | None]) -> dict[str, dict[str, int | None]]:
    """{topic: {partition: offset}}: the shape kept in audit events (JSON keys are strings)."""
    shaped: dict[str, dict[str, int | None]] = {}
    for ref, offset in sorted(offsets.items()):
        shaped.setdefault(ref.topic, {})[str(ref.partition)] = offset
    return shaped


def offsets_from_json(shaped: dict) -> dict[PartitionRef, int | None]:
    return {PartitionRef(topic, int(p)): o for topic, parts in (shaped or {}).items() for p, o in parts.items()}


def check_storable(group: str) -> None:
    if len(group) > GROUP_ID_MAX_STORED:
        raise ConsoleError(MSG_GROUP_ID_TOO_LONG.format(limit=GROUP_ID_MAX_STORED))


def group_delete(*, actor: Actor, cluster: str, group: str, confirm: str, reason: str,
                 kind: GroupKind | None = None) -> None:
    """DeleteGroups for the group's kind (Kafka refuses while it has members), with its positions kept in the audit
    so they can be recreated if needed. Without `kind`, the group's kind is looked up."""
    check_storable(group)
    change_checked(confirm=confirm, name=group, what="group", reason=reason, reason_required=False,
                   message=MSG_CONFIRM_GROUP.format(group=group))
    kind = kind or kind_for(cluster, group)
    before = kind.positions_before_delete(cluster, group)
    with guarded_change(actor=actor, action=kind.delete_action, cluster=cluster, target=f"group:{group}",
                        reason=reason, before=offsets_json(before),
                        reason_required=kind.delete_needs_reason) as record:
        kind.delete_group(cluster, group)
        record.after = kind.after_delete
    group_table.note_deleted(cluster, group)


def scope_text(scope) -> str:
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
    check_storable(group)
    change_checked(confirm=confirm, name=group, what="group", reason=reason,
                   message=MSG_CONFIRM_GROUP.format(group=group))
    change_guard(actor=actor, action="group.offsets.delete", cluster=cluster, target=f"group:{group}", reason=reason,
                 params={"topic": topic, "partitions": partitions})
    chosen = group_offsets_delete_preview(cluster=cluster, group=group, topic=topic, partitions=partitions)
    with guarded_change(actor=actor, action="group.offsets.delete", cluster=cluster, target=f"group:{group}",
                        reason=reason, params={"topic": topic, "partitions": partitions},
                        before=offsets_json(chosen)) as record:
        failed = delete_offsets(cluster, group, list(chosen))
        committed = cluster_admin(cluster).group_offsets([group])[group]
        record.after = offsets_json({ref: committed.get(ref) for ref in chosen})
        if failed:
            raise Conflict("Kafka refused some partitions: " + "; ".join(failed))
    lag_recheck_group(cluster=cluster, group=group, kind=CONSUMER)  # judged on what is left, at once
    return record.after


def share_offsets_delete(*, actor: Actor, cluster: str, group: str, topic: str, confirm: str, reason: str) -> None:
    """DeleteShareGroupOffsets for one topic (kafka-share-groups --delete-offsets); the start offsets go into the
    audit."""
    check_storable(group)
    change_checked(confirm=confirm, name=group, what="group", reason=reason, reason_required=False,
                   message=MSG_CONFIRM_GROUP.format(group=group))
    change_guard(actor=actor, action="share-group.offsets.delete", cluster=cluster, target=f"group:{group}",
                 reason=reason, params={"topic": topic})
    admin = cluster_admin(cluster)
    before = {ref: o.start_offset for ref, o in admin.share_group_offsets([group]).get(group, {}).items()
              if ref.topic == topic}
    with guarded_change(actor=actor, action="share-group.offsets.delete", cluster=cluster, target=f"group:{group}",
                        reason=reason, params={"topic": topic}, before=offsets_json(before),
                        reason_required=False) as record:
        admin.delete_share_group_offsets(group, [topic])
        record.after = {}
