"""`manage.py groups describe` for share and streams groups: the columns kafka-share-groups and
kafka-streams-groups print, and JSON with the same fields."""

from __future__ import annotations

import json

from offsets.kinds.share import ShareGroupDetail
from offsets.kinds.streams import StreamsGroupDetail
from offsets.serializers import share_describe_json, streams_describe_json


def _tasks(tasks) -> str:
    return ",".join(f"{sub}_{p}" for sub, parts in tasks for p in parts) or "-"


def share_describe(group: str, detail: ShareGroupDetail, *, members: bool, state: bool, as_json: bool):
    """Rows (headers first) or a JSON text."""
    if as_json:
        return json.dumps(share_describe_json(group, detail, members=members, state=state), indent=2)
    d = detail.description
    if state:
        return [["GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS"],
                [group, d.coordinator, d.state, d.group_epoch, d.assignment_epoch, len(d.members)]]
    if members:
        return [["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "MEMBER-EPOCH", "ASSIGNMENT"]] + [
            [group, m.member_id, m.host, m.client_id, m.member_epoch,
             ",".join(f"{r.topic}:{r.partition}" for r in m.assignment) or "-"] for m in d.members]
    return [["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"]] + [
        [group, p.ref.topic, p.ref.partition, p.start_offset, p.lag] for p in detail.partitions]


def streams_describe(group: str, detail: StreamsGroupDetail, *, members: bool, state: bool, as_json: bool):
    if as_json:
        return json.dumps(streams_describe_json(group, detail, members=members, state=state), indent=2)
    d = detail.description
    if state:
        return [["GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"],
                [group, d.coordinator, d.state, d.group_epoch, d.assignment_epoch, len(d.members)]]
    if members:
        return [["GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "HOST", "ACTIVE-TASKS", "STANDBY-TASKS",
                 "WARMUP-TASKS"]] + [
            [group, m.member_id, m.process_id, m.client_id, m.host, _tasks(m.active_tasks), _tasks(m.standby_tasks),
             _tasks(m.warmup_tasks)] for m in d.members]
    return [["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]] + [
        [group, p.ref.topic, p.ref.partition, p.committed, p.log_end, p.lag] for p in detail.partitions]


TYPED_DESCRIBE = {"share": share_describe, "streams": streams_describe}
