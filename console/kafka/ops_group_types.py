"""Kafka 4's other group types through Kafka's Java Admin client, which librdkafka does not list or describe:
every group with its type (ListGroups), and share groups (KIP-932): members, start offsets, resets, deletes."""

from __future__ import annotations

from console.kafka import java_admin
from console.kafka.errors import GroupNotFound, KafkaGatewayError, MSG_GROUP_NOT_FOUND
from console.kafka.types import (
    GroupListing, PartitionRef, ShareGroupDescription, ShareMember, SharePartitionOffset, StreamsGroupDescription,
    StreamsMember, StreamsSubtopology,
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
            targets = java_admin.long_valued_map([(jvm.org.apache.kafka.common.TopicPartition(ref.topic, ref.partition),
                                                   offset) for ref, offset in offsets.items()])
            return admin.alterShareGroupOffsets(group_id, targets).all()

        self._java(call)

    def delete_share_group_offsets(self, group_id: str, topics: list[str]) -> None:
        self._java(lambda admin, jvm: admin.deleteShareGroupOffsets(
            group_id, jvm.java.util.HashSet(list(topics))).all())

    def delete_share_groups(self, group_ids: list[str]) -> None:
        self._java(lambda admin, jvm: admin.deleteShareGroups(list(group_ids)).all())


class StreamsGroupOps(java_admin.JavaCalls):
    """Streams groups (KIP-1071): the group coordinator runs the Streams rebalance; offsets are committed ones."""

    def describe_streams_groups(self, group_ids: list[str]) -> dict[str, StreamsGroupDescription]:
        if not group_ids:
            return {}
        found = self._java(lambda admin, jvm: admin.describeStreamsGroups(list(group_ids)).all())
        described = {}
        for group_id in found.keySet():
            d = found.get(group_id)
            coordinator = d.coordinator()
            described[str(group_id)] = StreamsGroupDescription(
                group_id=str(group_id), state=str(d.groupState().toString()),
                coordinator=int(coordinator.id()) if coordinator is not None else None,
                group_epoch=int(d.groupEpoch()), assignment_epoch=int(d.targetAssignmentEpoch()),
                topology_epoch=int(d.topologyEpoch()),
                subtopologies=tuple(sorted((StreamsSubtopology(
                    subtopology_id=str(s.subtopologyId()), source_topics=tuple(str(t) for t in s.sourceTopics()),
                    repartition_sink_topics=tuple(str(t) for t in s.repartitionSinkTopics()),
                    changelog_topics=tuple(sorted(str(t) for t in s.stateChangelogTopics().keySet())),
                    repartition_source_topics=tuple(sorted(str(t) for t in s.repartitionSourceTopics().keySet())))
                    for s in d.subtopologies()), key=lambda s: s.subtopology_id)),
                members=tuple(sorted((StreamsMember(
                    member_id=str(m.memberId()), client_id=str(m.clientId()), host=str(m.clientHost()),
                    process_id=str(m.processId()), member_epoch=int(m.memberEpoch()),
                    active_tasks=_tasks(m.assignment().activeTasks()),
                    standby_tasks=_tasks(m.assignment().standbyTasks()),
                    warmup_tasks=_tasks(m.assignment().warmupTasks()))
                    for m in d.members()), key=lambda m: (m.client_id, m.member_id))))
        return described

    def streams_group_offsets(self, group_ids: list[str]) -> dict[str, dict[PartitionRef, int]]:
        """Committed offsets of each streams group: one request for all of them."""
        if not group_ids:
            return {}

        def call(admin, jvm):
            spec = jvm.org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec
            return admin.listStreamsGroupOffsets({g: spec() for g in dict.fromkeys(group_ids)}).all()

        found = self._java(call)
        by_group: dict[str, dict[PartitionRef, int]] = {}
        for group_id in found.keySet():
            partitions = found.get(group_id)
            offsets = by_group.setdefault(str(group_id), {})
            for tp in partitions.keySet():
                committed = partitions.get(tp)
                if committed is not None:
                    offsets[PartitionRef(str(tp.topic()), int(tp.partition()))] = int(committed.offset())
        return by_group

    def alter_streams_group_offsets(self, group_id: str, offsets: dict[PartitionRef, int]) -> None:
        def call(admin, jvm):
            targets = {jvm.org.apache.kafka.common.TopicPartition(ref.topic, ref.partition):
                       jvm.org.apache.kafka.clients.consumer.OffsetAndMetadata(o)
                       for ref, o in offsets.items()}
            return admin.alterStreamsGroupOffsets(group_id, targets).all()

        self._java(call)

    def delete_streams_group_offsets(self, group_id: str, refs: list[PartitionRef]) -> None:
        def call(admin, jvm):
            partitions = jvm.java.util.HashSet()
            for ref in refs:
                partitions.add(jvm.org.apache.kafka.common.TopicPartition(ref.topic, ref.partition))
            return admin.deleteStreamsGroupOffsets(group_id, partitions).all()

        self._java(call)

    def delete_streams_groups(self, group_ids: list[str]) -> None:
        self._java(lambda admin, jvm: admin.deleteStreamsGroups(list(group_ids)).all())


def _tasks(task_ids) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple(sorted((str(t.subtopologyId()), tuple(sorted(int(p) for p in t.partitions()))) for t in task_ids))
