"""Changes to consumer groups: delete a group or its offsets (offset resets and reverts: offsets.resets.services)."""

from __future__ import annotations

from django.conf import settings

from console.audit.actor import Actor
from console.audit.services import audited
from console.clusters.selectors import cluster_admin, cluster_connection, cluster_get
from console.kafka.kafka_tools import delete_group_offsets
from console.errors import Conflict, ConsoleError, NotFound
from console.kafka.types import PartitionRef
from offsets import group_table
from offsets.models import GROUP_ID_MAX_STORED
from offsets.resets.planning import AllTopics

MSG_GROUP_ACTIVE = ("Assignments can only be reset if the group '{group}' is inactive, but the current state is "
                    "{state} ({members} member(s)). Stop its consumers first.")
MSG_CONFIRM_GROUP = "Type the group name '{group}' exactly to confirm."
MSG_REASON = "A reason is required: it goes into the audit log."
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


def delete_offsets(cluster: str, group: str, refs: list[PartitionRef]) -> list[str]:
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


def group_delete(*, actor: Actor, cluster: str, group: str, confirm: str, reason: str) -> None:
    """DeleteGroups, with the group's committed offsets kept in the audit so they can be recreated if needed."""
    check_storable(group)
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
    if confirm != group:
        raise ConsoleError(MSG_CONFIRM_GROUP.format(group=group))
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    chosen = group_offsets_delete_preview(cluster=cluster, group=group, topic=topic, partitions=partitions)
    with audited(actor=actor, action="group.offsets.delete", cluster=cluster, target=f"group:{group}", reason=reason,
                 params={"topic": topic, "partitions": partitions}, before=offsets_json(chosen)) as record:
        failed = delete_offsets(cluster, group, list(chosen))
        committed = cluster_admin(cluster).group_offsets([group])[group]
        record.after = offsets_json({ref: committed.get(ref) for ref in chosen})
        if failed:
            raise Conflict("Kafka refused some partitions: " + "; ".join(failed))
    return record.after
