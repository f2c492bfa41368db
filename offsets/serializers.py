"""The JSON shapes of `manage.py groups` and `reset_offsets` with --format json, which the API answers too: one
function each, so the shell and the API say the same."""

from __future__ import annotations

from offsets.kinds import CONSUMER, kind_for
from offsets.kinds.base import GroupKind
from offsets.kinds.share import ShareGroupDetail
from offsets.kinds.streams import StreamsGroupDetail
from offsets.resets.planning import describe_strategy
from offsets.resets.preview import ResetPreview
from offsets.lag.selectors import GroupStatusView
from offsets.selectors_describe import GroupReport, group_report


def group_listings_json(groups) -> list[dict]:
    """`groups list`: each group's id, state and type (its protocol when Kafka gives no type)."""
    return [{"group": g.group_id, "state": g.state, "type": g.group_type or g.protocol} for g in groups]


def consumer_describe_json(report: GroupReport, *, members: bool = False, state: bool = False):
    """`groups describe` of a classic or consumer group: its offsets and lag rows, or --members, or --state."""
    description = report.description
    if members:
        return {"group": report.group, "state": description.state, "protocol": report.protocol, "type": report.type,
                "members": [{"consumer_id": m.member_id, "host": m.host, "client_id": m.client_id,
                             "partitions": len(m.assignment),
                             "assignment": [{"topic": r.topic, "partition": r.partition} for r in m.assignment]}
                            for m in description.members]}
    if state:
        coordinator = description.coordinator
        return {"group": report.group, "state": description.state, "protocol": report.protocol, "type": report.type,
                "members": len(description.members),
                "coordinator": None if coordinator is None else
                {"id": coordinator.id, "host": coordinator.host, "port": coordinator.port}}
    return report.as_json_rows()


def share_describe_json(group: str, detail: ShareGroupDetail, *, members: bool = False, state: bool = False):
    """`groups describe` of a share group, with the fields of kafka-share-groups' columns."""
    d = detail.description
    if state:
        return {"group": group, "type": "share", "state": d.state, "coordinator": d.coordinator,
                "group_epoch": d.group_epoch, "assignment_epoch": d.assignment_epoch, "members": len(d.members)}
    if members:
        return {"group": group, "type": "share", "state": d.state, "members": [
            {"member_id": m.member_id, "client_id": m.client_id, "host": m.host, "member_epoch": m.member_epoch,
             "assignment": [{"topic": r.topic, "partition": r.partition} for r in m.assignment]} for m in d.members]}
    return [{"group": group, "type": "share", "topic": p.ref.topic, "partition": p.ref.partition,
             "start_offset": p.start_offset, "leader_epoch": p.leader_epoch, "lag": p.lag} for p in detail.partitions]


def _tasks_json(tasks) -> list[dict]:
    return [{"subtopology": s, "partitions": list(p)} for s, p in tasks]


def streams_describe_json(group: str, detail: StreamsGroupDetail, *, members: bool = False, state: bool = False):
    """`groups describe` of a streams group, with the fields of kafka-streams-groups' columns."""
    d = detail.description
    if state:
        return {"group": group, "type": "streams", "state": d.state, "coordinator": d.coordinator,
                "group_epoch": d.group_epoch, "assignment_epoch": d.assignment_epoch,
                "topology_epoch": d.topology_epoch, "members": len(d.members),
                "subtopologies": [{"id": s.subtopology_id, "source_topics": list(s.source_topics),
                                   "repartition_source_topics": list(s.repartition_source_topics),
                                   "repartition_sink_topics": list(s.repartition_sink_topics),
                                   "changelog_topics": list(s.changelog_topics)} for s in d.subtopologies]}
    if members:
        return {"group": group, "type": "streams", "state": d.state, "members": [
            {"member_id": m.member_id, "process_id": m.process_id, "client_id": m.client_id, "host": m.host,
             "member_epoch": m.member_epoch, "active_tasks": _tasks_json(m.active_tasks),
             "standby_tasks": _tasks_json(m.standby_tasks), "warmup_tasks": _tasks_json(m.warmup_tasks)}
            for m in d.members]}
    return [{"group": group, "type": "streams", "topic": p.ref.topic, "partition": p.ref.partition,
             "current_offset": p.committed, "log_end_offset": p.log_end, "lag": p.lag} for p in detail.partitions]


TYPED_DESCRIBE_JSON = {"share": share_describe_json, "streams": streams_describe_json}


def group_describe_json(cluster: str, group: str, *, members: bool = False, state: bool = False):
    """`groups describe [--members|--state] --format json` of a group of any kind."""
    kind = kind_for(cluster, group)
    if kind is not CONSUMER:
        return TYPED_DESCRIBE_JSON[kind.name](group, kind.detail(cluster, group), members=members, state=state)
    return consumer_describe_json(group_report(cluster, group), members=members, state=state)


def group_status_json(group: str, status: GroupStatusView | None) -> dict:
    """The last lag sweep's verdict on a group: OK, WARN, ERR, STOP or BLOCKED, why, and each partition's that is
    not OK."""
    if status is None:
        return {"group": group, "status": "", "reason": "not sampled yet", "partitions": {}, "lag": None,
                "sampled_at": None}
    return {"group": group, "status": status.status, "reason": status.reason, "partitions": dict(status.partitions),
            "lag": status.lag, "sampled_at": status.sampled_at.isoformat() if status.sampled_at else None}


def reset_preview_json(preview: ResetPreview, *, kind: GroupKind) -> dict:
    """`reset_offsets --dry-run --format json`: the plan row by row, the group's state, and the fingerprint that
    `--execute --if-unchanged` (the API's execute) must be given back. `refusal`: why execute would be refused
    now (the group has members), or None."""
    plan = preview.plan
    refusal = None if preview.allowed and not preview.members else kind.msg_active.format(
        group=plan.group, state=preview.state, members=preview.members)
    return {
        "group": plan.group, "kind": kind.name, "state": preview.state, "members": preview.members,
        "allowed": refusal is None, "refusal": refusal, "semantics": kind.semantics,
        "strategy": describe_strategy(plan.strategy), "fingerprint": preview.fingerprint, "timestamp": plan.timestamp,
        "partitions": [{"topic": r.ref.topic, "partition": r.ref.partition, "current": r.current,
                        "target": r.target, "delta": r.delta, "log_start": r.log_start, "log_end": r.log_end,
                        "clamped": r.clamped, "note": r.note, "records_to_skip": r.records_to_skip,
                        "records_to_reread": r.records_to_reread} for r in plan.rows],
    }


def reset_after_json(after: dict) -> list[dict]:
    """What an executed reset read back from Kafka: topic, partition, offset (None where it was deleted)."""
    return [{"topic": topic, "partition": int(partition), "offset": offset}
            for topic, parts in after.items() for partition, offset in parts.items()]
