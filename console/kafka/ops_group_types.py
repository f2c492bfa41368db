"""Kafka 4's other group types through Kafka's Java Admin client, which librdkafka does not list or describe:
every group with its type (ListGroups), and share groups (KIP-932): members, start offsets, resets, deletes."""

from __future__ import annotations

from console.kafka import java_admin
from console.kafka.errors import GroupNotFound, KafkaGatewayError, MSG_GROUP_NOT_FOUND
from console.kafka.types import (
    GroupListing, PartitionRef, ShareGroupDescription, ShareMember, SharePartitionOffset,
)

GROUP_TYPES = {"CLASSIC": "classic", "CONSUMER": "consumer", "SHARE": "share", "STREAMS": "streams"}


def _optional(value, convert=int):
    return convert(value.get()) if value is not None and value.isPresent() else None


def _refs(partitions) -> tuple[PartitionRef, ...]:
    return tuple(sorted(PartitionRef(str(tp.topic()), int(tp.partition())) for tp in partitions))


class GroupTypeOps(java_admin.JavaCalls):
    def list_groups_of_every_type(self) -> list[GroupListing]:
        """ListGroups on every broker with no type filter: classic, consumer, share and streams groups."""
        found = self._java(lambda admin, jvm: admin.listGroups().all())
        listings = []
        for g in found:
            kind = _optional(g.type(), lambda t: GROUP_TYPES.get(str(t.name()), str(t.name()).lower()))
            state = _optional(g.groupState(), lambda s: str(s.toString()))
            listings.append(GroupListing(group_id=str(g.groupId()), state=state or "Unknown",
                                         protocol=kind or (str(g.protocol()) or "unknown"),
                                         simple=bool(g.isSimpleConsumerGroup()), group_type=kind or "classic"))
        return sorted(listings, key=lambda g: g.group_id)

    def describe_share_groups(self, group_ids: list[str]) -> dict[str, ShareGroupDescription]:
        """ShareGroupDescribe for many groups at once; an unknown id is a GroupNotFound."""
        if not group_ids:
            return {}
        found = self._java(lambda admin, jvm: admin.describeShareGroups(list(group_ids)).all())
        described = {}
        for group_id in found.keySet():
            d = found.get(group_id)
            coordinator = d.coordinator()
            described[str(group_id)] = ShareGroupDescription(
                group_id=str(group_id), state=str(d.groupState().toString()),
                coordinator=int(coordinator.id()) if coordinator is not None else None,
                group_epoch=int(d.groupEpoch()), assignment_epoch=int(d.targetAssignmentEpoch()),
                members=tuple(sorted((ShareMember(member_id=str(m.consumerId()), client_id=str(m.clientId()),
                                                  host=str(m.host()), member_epoch=int(m.memberEpoch()),
                                                  assignment=_refs(m.assignment().topicPartitions()))
                                      for m in d.members()), key=lambda m: (m.client_id, m.member_id))))
        return described

    def share_group_offsets(self, group_ids: list[str]) -> dict[str, dict[PartitionRef, SharePartitionOffset]]:
        """For each group, the share-partition start offset (and lag, where the coordinator knows it) of every
        partition it has state for: one DescribeShareGroupOffsets per coordinator for all the groups."""
        if not group_ids:
            return {}

        def call(admin, jvm):
            spec = jvm.org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec
            return admin.listShareGroupOffsets({g: spec() for g in dict.fromkeys(group_ids)}).all()

        try:
            found = self._java(call)
        except KafkaGatewayError as exc:
            if exc.code in ("GroupIdNotFoundException", "GroupNotFoundException"):
                raise GroupNotFound(MSG_GROUP_NOT_FOUND.format(group=", ".join(group_ids), cluster=self.cluster),
                                    code=exc.code, cluster=self.cluster) from exc
            raise
        by_group: dict[str, dict[PartitionRef, SharePartitionOffset]] = {}
        for group_id in found.keySet():
            partitions = found.get(group_id)
            offsets = by_group.setdefault(str(group_id), {})
            for tp in partitions.keySet():
                info = partitions.get(tp)
                ref = PartitionRef(str(tp.topic()), int(tp.partition()))
                offsets[ref] = SharePartitionOffset(
                    ref=ref, start_offset=int(info.startOffset()) if info is not None else None,
                    leader_epoch=_optional(info.leaderEpoch()) if info is not None else None,
                    lag=_optional(info.lag()) if info is not None else None)
        return by_group

    def alter_share_group_offsets(self, group_id: str, offsets: dict[PartitionRef, int]) -> None:
        """Sets share-partition start offsets; the coordinator refuses while the group has members."""
        def call(admin, jvm):
            common = jvm.org.apache.kafka.common
            targets = {common.TopicPartition(ref.topic, ref.partition): jvm.java.lang.Long.valueOf(str(offset))
                       for ref, offset in offsets.items()}
            return admin.alterShareGroupOffsets(group_id, targets).all()

        self._java(call)

    def delete_share_group_offsets(self, group_id: str, topics: list[str]) -> None:
        self._java(lambda admin, jvm: admin.deleteShareGroupOffsets(
            group_id, jvm.java.util.HashSet(list(topics))).all())

    def delete_share_groups(self, group_ids: list[str]) -> None:
        self._java(lambda admin, jvm: admin.deleteShareGroups(list(group_ids)).all())
