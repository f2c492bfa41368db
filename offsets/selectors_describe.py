"""`kafka-consumer-groups --list` and `--describe [--members|--state]`, computed as Kafka's tool computes them."""

from __future__ import annotations

from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from gateway.kafka.errors import MSG_GROUP_NOT_FOUND, GroupNotFound
from gateway.kafka.types import LATEST, GroupDescription, GroupListing, PartitionRef


@dataclass(frozen=True)
class DescribeRow:
    """One line of `--describe --offsets`; None where Kafka's tool prints '-'."""

    topic: str
    partition: int
    current_offset: int | None
    log_end_offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None


@dataclass(frozen=True)
class GroupReport:
    group: str
    description: GroupDescription
    rows: tuple[DescribeRow, ...]

    @property
    def type(self) -> str:
        return self.description.protocol  # Kafka 4's group type: classic or consumer

    @property
    def protocol(self) -> str:
        return self.description.assignor  # the partition assignor the group agreed on

    def as_json_rows(self) -> list[dict]:
        shared = {"group": self.group, "state": self.description.state, "protocol": self.protocol, "type": self.type}
        return [{**shared, "topic": r.topic, "partition": r.partition, "current_offset": r.current_offset,
                 "log_end_offset": r.log_end_offset, "lag": r.lag, "consumer_id": r.consumer_id, "host": r.host,
                 "client_id": r.client_id} for r in self.rows]


def groups_list(cluster: str) -> list[GroupListing]:
    return sorted(cluster_admin(cluster).list_groups(), key=lambda g: g.group_id)


def group_report(cluster: str, group: str) -> GroupReport:
    """DescribeGroups, OffsetFetch and one ListOffsets(latest): the rows of every assigned or committed partition.
    An assigned partition without a commit has no current offset and no lag; a committed partition nobody is
    assigned has no consumer; sorted by topic and partition."""
    admin = cluster_admin(cluster)
    description = admin.describe_groups([group])[group]
    committed = admin.group_offsets([group])[group]
    if description.state == "Dead" and not committed:
        raise GroupNotFound(MSG_GROUP_NOT_FOUND.format(group=group, cluster=cluster), cluster=cluster)
    owners = {ref: member for member in description.members for ref in member.assignment}
    refs: list[PartitionRef] = sorted(set(committed) | set(owners))
    ends = admin.list_offsets_many(refs, [LATEST], strict=False)[LATEST] if refs else {}
    rows = []
    for ref in refs:
        current, member = committed.get(ref), owners.get(ref)
        end = ends[ref].offset if ref in ends else None
        lag = end - current if current is not None and end is not None else None
        rows.append(DescribeRow(ref.topic, ref.partition, current, end, lag,
                                member.member_id if member else None, member.host if member else None,
                                member.client_id if member else None))
    return GroupReport(group=group, description=description, rows=tuple(rows))
