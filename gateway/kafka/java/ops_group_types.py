"""Kafka 4's other group types through Kafka's Java Admin client, which librdkafka does not list or describe:
every group with its type (ListGroups), and share groups (KIP-932): members, start offsets, resets, deletes."""

from __future__ import annotations

from gateway.kafka.errors import GroupNotFound, KafkaGatewayError, MSG_GROUP_NOT_FOUND
from gateway.kafka.java import bridge
from gateway.kafka.types import (
    GroupListing, PartitionRef, ShareGroupDescription, ShareMember, SharePartitionOffset, StreamsGroupDescription,
    StreamsMember, StreamsSubtopology,
)

_ref = bridge.partition_ref


def _refs(partitions: list[dict]) -> tuple[PartitionRef, ...]:
    return tuple(sorted(PartitionRef(p["topic"], int(p["partition"])) for p in partitions))


def _coordinator(node: dict | None) -> int | None:
    return int(node["id"]) if node else None


class GroupTypeOps(bridge.JavaCalls):
    """Each call returns its Java result as plain data in one round trip (bridge.as_plain): a page of groups
    costs a few gateway calls, not one per getter."""

    def list_groups_of_every_type(self) -> list[GroupListing]:
        """ListGroups on every broker with no type filter: classic, consumer, share and streams groups. Classic
        groups of another protocol than a consumer's (Kafka Connect's workers, a schema registry's leader election)
        are left out, as librdkafka's ListConsumerGroups and `kafka-consumer-groups --list` leave them out: they hold
        no offsets, and the consumer-group calls refuse them ("not a consumer group")."""
        found = bridge.as_plain(self._java(lambda admin, jvm: admin.listGroups().all()))
        listings = []
        for g in found:
            kind = (g.get("type") or "").lower() or None
            protocol = g.get("protocol") or ""
            if kind in (None, "classic") and protocol not in ("", "consumer"):
                continue
            listings.append(GroupListing(group_id=g["groupId"], state=g.get("groupState") or "Unknown",
                                         protocol=kind or protocol or "unknown",
                                         simple=kind == "classic" and not protocol, group_type=kind or "classic"))
        return sorted(listings, key=lambda g: g.group_id)

    def describe_share_groups(self, group_ids: list[str]) -> dict[str, ShareGroupDescription]:
        """ShareGroupDescribe for many groups at once; an unknown id is a GroupNotFound."""
        if not group_ids:
            return {}
        found = bridge.as_plain(self._java(lambda admin, jvm: admin.describeShareGroups(list(group_ids)).all()))
        return {group_id: ShareGroupDescription(
            group_id=group_id, state=d["groupState"], coordinator=_coordinator(d.get("coordinator")),
            group_epoch=int(d["groupEpoch"]), assignment_epoch=int(d["targetAssignmentEpoch"]),
            members=tuple(sorted((ShareMember(member_id=m["memberId"], client_id=m["clientId"], host=m["host"],
                                              member_epoch=int(m["memberEpoch"]),
                                              assignment=_refs(m["assignment"]["topicPartitions"]))
                                  for m in d["members"]), key=lambda m: (m.client_id, m.member_id))))
            for group_id, d in found.items()}

    def share_group_offsets(self, group_ids: list[str]) -> dict[str, dict[PartitionRef, SharePartitionOffset]]:
        """For each group, the share-partition start offset (and lag, where the coordinator knows it) of every
        partition it has state for: one DescribeShareGroupOffsets per coordinator for all the groups."""
        if not group_ids:
            return {}

        def call(admin, jvm):
            spec = jvm.org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec
            return admin.listShareGroupOffsets({g: spec() for g in dict.fromkeys(group_ids)}).all()

        try:
            found = bridge.as_plain(self._java(call))
        except KafkaGatewayError as exc:
            if exc.code in ("GroupIdNotFoundException", "GroupNotFoundException"):
                raise GroupNotFound(MSG_GROUP_NOT_FOUND.format(group=", ".join(group_ids), cluster=self.cluster),
                                    code=exc.code, cluster=self.cluster) from exc
            raise
        by_group: dict[str, dict[PartitionRef, SharePartitionOffset]] = {}
        for group_id, partitions in found.items():
            offsets = by_group.setdefault(group_id, {})
            for key, info in (partitions or {}).items():
                ref = _ref(key)
                offsets[ref] = SharePartitionOffset(
                    ref=ref, start_offset=int(info["startOffset"]) if info else None,
                    leader_epoch=info.get("leaderEpoch") if info else None, lag=info.get("lag") if info else None)
        return by_group

    def alter_share_group_offsets(self, group_id: str, offsets: dict[PartitionRef, int]) -> None:
        """Sets share-partition start offsets; the coordinator refuses while the group has members."""
        def call(admin, jvm):
            targets = bridge.long_valued_map([(jvm.org.apache.kafka.common.TopicPartition(ref.topic, ref.partition),
                                                   offset) for ref, offset in offsets.items()])
            return admin.alterShareGroupOffsets(group_id, targets).all()

        self._java(call)

    def delete_share_group_offsets(self, group_id: str, topics: list[str]) -> None:
        self._java(lambda admin, jvm: admin.deleteShareGroupOffsets(
            group_id, jvm.java.util.HashSet(list(topics))).all())

    def delete_share_groups(self, group_ids: list[str]) -> None:
        self._java(lambda admin, jvm: admin.deleteShareGroups(list(group_ids)).all())


class StreamsGroupOps(bridge.JavaCalls):
    """Streams groups (KIP-1071): the group coordinator runs the Streams rebalance; offsets are committed ones."""

    def describe_streams_groups(self, group_ids: list[str]) -> dict[str, StreamsGroupDescription]:
        if not group_ids:
            return {}
        found = bridge.as_plain(self._java(lambda admin, jvm: admin.describeStreamsGroups(list(group_ids)).all()))
        return {group_id: StreamsGroupDescription(
            group_id=group_id, state=d["groupState"], coordinator=_coordinator(d.get("coordinator")),
            group_epoch=int(d["groupEpoch"]), assignment_epoch=int(d["targetAssignmentEpoch"]),
            topology_epoch=int(d["topologyEpoch"]),
            subtopologies=tuple(sorted((StreamsSubtopology(
                subtopology_id=s["subtopologyId"], source_topics=tuple(s["sourceTopics"]),
                repartition_sink_topics=tuple(s["repartitionSinkTopics"]),
                changelog_topics=tuple(sorted(s["stateChangelogTopics"] or {})),
                repartition_source_topics=tuple(sorted(s["repartitionSourceTopics"] or {})))
                for s in d["subtopologies"]), key=lambda s: s.subtopology_id)),
            members=tuple(sorted((StreamsMember(
                member_id=m["memberId"], client_id=m["clientId"], host=m["clientHost"], process_id=m["processId"],
                member_epoch=int(m["memberEpoch"]), active_tasks=_tasks(m["assignment"]["activeTasks"]),
                standby_tasks=_tasks(m["assignment"]["standbyTasks"]),
                warmup_tasks=_tasks(m["assignment"]["warmupTasks"]))
                for m in d["members"]), key=lambda m: (m.client_id, m.member_id))))
            for group_id, d in found.items()}

    def streams_group_offsets(self, group_ids: list[str]) -> dict[str, dict[PartitionRef, int]]:
        """Committed offsets of each streams group: one request for all of them."""
        if not group_ids:
            return {}

        def call(admin, jvm):
            spec = jvm.org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec
            return admin.listStreamsGroupOffsets({g: spec() for g in dict.fromkeys(group_ids)}).all()

        return {group_id: {_ref(key): int(committed["offset"]) for key, committed in (partitions or {}).items()
                           if committed is not None}
                for group_id, partitions in bridge.as_plain(self._java(call)).items()}

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


def _tasks(task_ids: list[dict]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple(sorted((t["subtopologyId"], tuple(sorted(int(p) for p in t["partitions"]))) for t in task_ids))
