"""Consumer groups: listing, describing, committed offsets, altering offsets, deleting."""

from __future__ import annotations

import time

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

from gateway.kafka.errors import MSG_GROUP_NOT_FOUND, ClusterUnavailable, GroupNotFound, KafkaGatewayError
from gateway.kafka.librdkafka.base import BATCH_OBJECTS, AdminBase
from gateway.kafka.librdkafka.mapping import coordinator_moving, kafka_error_to_exception
from gateway.kafka.types import BrokerInfo, GroupDescription, GroupListing, ItemFailure, MemberInfo, PartitionRef

_STATE_NAMES = {0: "Unknown", 1: "PreparingRebalance", 2: "CompletingRebalance", 3: "Stable", 4: "Dead", 5: "Empty"}
_PROTOCOLS = {0: "unknown", 1: "consumer", 2: "classic"}


def _enum_int(value) -> int:
    return int(getattr(value, "value", value) or 0)


def _refs(assignment) -> tuple[PartitionRef, ...]:
    if assignment is None:
        return ()
    return tuple(sorted(PartitionRef(tp.topic, tp.partition) for tp in assignment.topic_partitions))


class GroupOps(AdminBase):
    def list_groups(self) -> list[GroupListing]:
        """ListGroups on every broker (one call); only groups of the consumer protocol types are returned.
        librdkafka reports a broker that did not answer in `errors` beside a shorter (or empty) list: that is raised,
        since a list missing a broker's groups would read as those groups being gone."""

        def run(admin: AdminClient) -> list[GroupListing]:
            result = self._wait(admin.list_consumer_groups(request_timeout=self.timeout))
            if result.errors:
                raise self._partition_error(result.errors[0])
            listings = [
                GroupListing(group_id=g.group_id, state=_STATE_NAMES.get(_enum_int(getattr(g, "state", 0)), "Unknown"),
                             protocol=_PROTOCOLS.get(_enum_int(getattr(g, "type", 0)), "unknown"),
                             simple=bool(g.is_simple_consumer_group))
                for g in result.valid
            ]
            return sorted(listings, key=lambda g: g.group_id)

        return self._call(run)

    def describe_groups(self, group_ids: list[str]) -> dict[str, GroupDescription]:
        """DescribeGroups / ConsumerGroupDescribe for many groups at once; unknown groups come back as Dead."""

        def run(admin: AdminClient) -> dict[str, GroupDescription]:
            if not group_ids:
                return {}
            futures = admin.describe_consumer_groups(list(group_ids), request_timeout=self.timeout)
            described: dict[str, GroupDescription] = {}
            for group_id, outcome in self._wait_each(futures).items():
                if isinstance(outcome, GroupNotFound):
                    described[group_id] = GroupDescription(group_id, "Dead", "unknown", "", None, ())
                elif isinstance(outcome, KafkaGatewayError):
                    raise outcome
                else:
                    described[group_id] = _description(outcome)
            return described

        return self._call(run)

    def group_offsets(self, group_ids: list[str], *, skip_failed: bool = False) -> dict[str, dict[PartitionRef, int]]:
        """OffsetFetch for each group (the client allows one group per request), all sent before any is awaited.
        With skip_failed, a group whose fetch failed (coordinator moving, say) is left out instead of failing all,
        unless every group failed because the cluster did not answer."""

        def run(admin: AdminClient) -> dict[str, dict[PartitionRef, int]]:
            def send(groups: list[str]) -> dict:
                futures = {}
                for group_id in groups:
                    futures.update(admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group_id)],
                                                                     request_timeout=self.timeout))
                return futures

            outcomes = self._wait_each_settled(send, group_ids)
            if skip_failed and outcomes and all(isinstance(o, ClusterUnavailable) for o in outcomes.values()):
                raise next(iter(outcomes.values()))
            offsets: dict[str, dict[PartitionRef, int]] = {}
            for group_id, outcome in outcomes.items():
                if isinstance(outcome, KafkaGatewayError):
                    if skip_failed:
                        continue
                    raise outcome
                # Partitions without a commit come back as OFFSET_INVALID (-1001).
                offsets[group_id] = {PartitionRef(tp.topic, tp.partition): tp.offset
                                     for tp in outcome.topic_partitions or [] if tp.offset >= 0}
            return offsets

        return self._call(run)

    def alter_group_offsets(self, group_id: str, offsets: dict[PartitionRef, int]) -> dict[PartitionRef, int]:
        """OffsetCommit as an admin (no member): the broker accepts it only while the group has no members."""

        def run(admin: AdminClient) -> dict[PartitionRef, int]:
            request = ConsumerGroupTopicPartitions(
                group_id, [TopicPartition(r.topic, r.partition, o) for r, o in sorted(offsets.items())])
            deadline, pause = time.monotonic() + self.timeout, 0.1
            while True:
                result = self._wait(admin.alter_consumer_group_offsets([request],
                                                                       request_timeout=self.timeout)[group_id])
                outcomes = {PartitionRef(tp.topic, tp.partition): tp for tp in result.topic_partitions}
                failed = {ref: self._partition_error(tp.error) for ref, tp in outcomes.items() if tp.error}
                # The future succeeds while each partition says COORDINATOR_LOAD_IN_PROGRESS (a cluster's first
                # commit, while __consumer_offsets is made) and nothing was written: the same commit is sent again,
                # as Kafka's own tools do, rather than reported as done or failed.
                moving = failed and all(coordinator_moving(error) for error in failed.values())
                if not moving or time.monotonic() + pause >= deadline:
                    break
                time.sleep(pause)
                pause = min(pause * 2, 1.0)
            if failed:
                self._raise_partition_failures(failed)
            return {ref: tp.offset for ref, tp in outcomes.items()}

        return self._call(run)

    def delete_group(self, group_id: str) -> None:
        """DeleteGroups: the broker refuses a group that still has members (NON_EMPTY_GROUP)."""

        def run(admin: AdminClient) -> None:
            future = admin.delete_consumer_groups([group_id], request_timeout=self.timeout)[group_id]
            try:
                self._wait(future)
            except GroupNotFound as exc:
                raise GroupNotFound(MSG_GROUP_NOT_FOUND.format(group=group_id, cluster=self.cluster),
                                    code=exc.code, cluster=self.cluster) from exc

        self._call(run)

    def delete_groups(self, group_ids: list[str]) -> dict[str, ItemFailure]:
        """DeleteGroups for many consumer groups, BATCH_OBJECTS per call (librdkafka sends one request per
        coordinator); returns the groups Kafka refused (NON_EMPTY_GROUP while a group has members)."""

        def run(admin: AdminClient) -> dict[str, ItemFailure]:
            outcomes = {}
            for start in range(0, len(group_ids), BATCH_OBJECTS):
                futures = admin.delete_consumer_groups(list(group_ids[start:start + BATCH_OBJECTS]),
                                                       request_timeout=self.timeout)
                outcomes.update(self._wait_each(futures))
            return self._item_failures(outcomes)

        return self._call(run)

    def _partition_error(self, error) -> KafkaGatewayError:
        return kafka_error_to_exception(error, cluster=self.cluster, timeout=self.timeout)


def _description(d) -> GroupDescription:
    coordinator = None
    if d.coordinator is not None:
        coordinator = BrokerInfo(id=d.coordinator.id, host=d.coordinator.host, port=d.coordinator.port,
                                 rack=d.coordinator.rack)
    members = tuple(
        MemberInfo(member_id=m.member_id, client_id=m.client_id, host=m.host, instance_id=m.group_instance_id,
                   assignment=_refs(m.assignment),
                   target_assignment=_refs(m.target_assignment) if m.target_assignment is not None else None)
        for m in d.members
    )
    return GroupDescription(
        group_id=d.group_id, state=_STATE_NAMES.get(_enum_int(d.state), "Unknown"),
        protocol=_PROTOCOLS.get(_enum_int(getattr(d, "type", 0)), "unknown"), assignor=d.partition_assignor or "",
        coordinator=coordinator, members=members, simple=bool(d.is_simple_consumer_group),
    )
