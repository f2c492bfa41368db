"""`manage.py groups describe` for share and streams groups: the columns kafka-share-groups and
kafka-streams-groups print, and JSON with the same fields."""

from __future__ import annotations

import json

from offsets.kinds.share import ShareGroupDetail
from offsets.kinds.streams import StreamsGroupDetail


def _tasks(tasks) -> str:
    return ",".join(f"{sub}_{p}" for sub, parts in tasks for p in parts) or "-"


def share_describe(group: str, detail: ShareGroupDetail, *, members: bool, state: bool, as_json: bool):
    """Rows (headers first) or a JSON text."""
    d = detail.description
    if state:
        payload = {"group": group, "type": "share", "state": d.state, "coordinator": d.coordinator,
                   "group_epoch": d.group_epoch, "assignment_epoch": d.assignment_epoch, "members": len(d.members)}
        rows = [["GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS"],
                [group, d.coordinator, d.state, d.group_epoch, d.assignment_epoch, len(d.members)]]
    elif members:
        payload = {"group": group, "type": "share", "state": d.state, "members": [
            {"member_id": m.member_id, "client_id": m.client_id, "host": m.host, "member_epoch": m.member_epoch,
             "assignment": [{"topic": r.topic, "partition": r.partition} for r in m.assignment]} for m in d.members]}
        rows = [["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "MEMBER-EPOCH", "ASSIGNMENT"]] + [
            [group, m.member_id, m.host, m.client_id, m.member_epoch,
             ",".join(f"{r.topic}:{r.partition}" for r in m.assignment) or "-"] for m in d.members]
    else:
        payload = [{"group": group, "type": "share", "topic": p.ref.topic, "partition": p.ref.partition,
                    "start_offset": p.start_offset, "leader_epoch": p.leader_epoch, "lag": p.lag}
                   for p in detail.partitions]
        rows = [["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"]] + [
            [group, p.ref.topic, p.ref.partition, p.start_offset, p.lag] for p in detail.partitions]
    return json.dumps(payload, indent=2) if as_json else rows


def streams_describe(group: str, detail: StreamsGroupDetail, *, members: bool, state: bool, as_json: bool):
    d = detail.description
    if state:
        payload = {"group": group, "type": "streams", "state": d.state, "coordinator": d.coordinator,
                   "group_epoch": d.group_epoch, "assignment_epoch": d.assignment_epoch,
                   "topology_epoch": d.topology_epoch, "members": len(d.members),
                   "subtopologies": [{"id": s.subtopology_id, "source_topics": list(s.source_topics),
                                      "repartition_source_topics": list(s.repartition_source_topics),
                                      "repartition_sink_topics": list(s.repartition_sink_topics),
                                      "changelog_topics": list(s.changelog_topics)} for s in d.subtopologies]}
        rows = [["GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"],
                [group, d.coordinator, d.state, d.group_epoch, d.assignment_epoch, len(d.members)]]
    elif members:
        payload = {"group": group, "type": "streams", "state": d.state, "members": [
            {"member_id": m.member_id, "process_id": m.process_id, "client_id": m.client_id, "host": m.host,
             "member_epoch": m.member_epoch,
             "active_tasks": [{"subtopology": s, "partitions": list(p)} for s, p in m.active_tasks],
             "standby_tasks": [{"subtopology": s, "partitions": list(p)} for s, p in m.standby_tasks],
             "warmup_tasks": [{"subtopology": s, "partitions": list(p)} for s, p in m.warmup_tasks]}
            for m in d.members]}
        rows = [["GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "HOST", "ACTIVE-TASKS", "STANDBY-TASKS",
                 "WARMUP-TASKS"]] + [
            [group, m.member_id, m.process_id, m.client_id, m.host, _tasks(m.active_tasks), _tasks(m.standby_tasks),
             _tasks(m.warmup_tasks)] for m in d.members]
    else:
        payload = [{"group": group, "type": "streams", "topic": p.ref.topic, "partition": p.ref.partition,
                    "current_offset": p.committed, "log_end_offset": p.log_end, "lag": p.lag}
                   for p in detail.partitions]
        rows = [["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]] + [
            [group, p.ref.topic, p.ref.partition, p.committed, p.log_end, p.lag] for p in detail.partitions]
    return json.dumps(payload, indent=2) if as_json else rows


TYPED_DESCRIBE = {"share": share_describe, "streams": streams_describe}
