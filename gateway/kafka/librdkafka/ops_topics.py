"""Topic metadata and topic changes."""

from __future__ import annotations

import uuid

from confluent_kafka import TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from gateway.kafka.errors import MSG_TOPIC_NOT_FOUND, KafkaGatewayError, TopicNotFound
from gateway.kafka.librdkafka.base import BATCH_OBJECTS, AdminBase
from gateway.kafka.types import ItemFailure, PartitionMetadata, PartitionRef, TopicMetadata


class TopicOps(AdminBase):
    def list_topics(self) -> list[TopicMetadata]:
        """One Metadata request for all topics: partitions with leader, replicas and ISR."""

        def run(admin: AdminClient) -> list[TopicMetadata]:
            metadata = admin.list_topics(timeout=self.timeout)
            topics = [_topic_from_metadata(name, topic) for name, topic in metadata.topics.items()]
            return sorted(topics, key=lambda t: t.name)

        return self._call(run)

    def describe_topics(self, names: list[str], *, skip_missing: bool = False) -> dict[str, TopicMetadata]:
        """DescribeTopics in one request: topic ids, the internal flag and per-partition replicas and ISR.

        Raises TopicNotFound naming the first unknown topic; with skip_missing, unknown topics are left out.
        """

        def run(admin: AdminClient) -> dict[str, TopicMetadata]:
            if not names:
                return {}
            futures = admin.describe_topics(TopicCollection(list(names)), request_timeout=self.timeout)
            outcomes = self._wait_each(futures)
            if skip_missing:
                outcomes = {name: o for name, o in outcomes.items() if not isinstance(o, TopicNotFound)}
            for name, outcome in outcomes.items():
                if isinstance(outcome, TopicNotFound):
                    raise self._topic_not_found(name, outcome)
                if isinstance(outcome, Exception):
                    raise outcome
            return {name: _topic_from_description(d) for name, d in outcomes.items()}

        return self._call(run)

    def create_topic(self, name: str, *, partitions: int, replication_factor: int, configs: dict[str, str],
                     validate_only: bool = False) -> None:
        """CreateTopics; with validate_only the broker checks everything (configs included) and creates nothing."""

        def run(admin: AdminClient) -> None:
            topic = NewTopic(name, num_partitions=partitions, replication_factor=replication_factor, config=dict(configs))
            futures = admin.create_topics([topic], validate_only=validate_only, request_timeout=self.timeout,
                                          operation_timeout=self.timeout)
            self._wait(futures[name])

        self._call(run)

    def delete_topic(self, name: str) -> None:
        def run(admin: AdminClient) -> None:
            futures = admin.delete_topics([name], request_timeout=self.timeout, operation_timeout=self.timeout)
            try:
                self._wait(futures[name])
            except TopicNotFound as exc:
                raise self._topic_not_found(name, exc) from exc

        self._call(run)

    def delete_topics(self, names: list[str]) -> dict[str, ItemFailure]:
        """DeleteTopics for many topics, BATCH_OBJECTS per request, one request at a time; returns the topics Kafka
        refused (a topic another client deleted first: UNKNOWN_TOPIC_OR_PART), the others are gone."""

        def run(admin: AdminClient) -> dict[str, ItemFailure]:
            outcomes = {}
            for start in range(0, len(names), BATCH_OBJECTS):
                futures = admin.delete_topics(list(names[start:start + BATCH_OBJECTS]), request_timeout=self.timeout,
                                              operation_timeout=self.timeout)
                outcomes.update(self._wait_each(futures))
            outcomes = {name: self._topic_not_found(name, o) if isinstance(o, TopicNotFound) else o
                        for name, o in outcomes.items()}
            return self._item_failures(outcomes)

        return self._call(run)

    def add_partitions_many(self, totals: dict[str, int], *, validate_only: bool = False) -> dict[str, ItemFailure]:
        """CreatePartitions for many topics (topic -> new total), BATCH_OBJECTS per request; returns the refused."""

        def run(admin: AdminClient) -> dict[str, ItemFailure]:
            items = sorted(totals.items())
            outcomes = {}
            for start in range(0, len(items), BATCH_OBJECTS):
                chunk = [NewPartitions(name, total) for name, total in items[start:start + BATCH_OBJECTS]]
                futures = admin.create_partitions(chunk, validate_only=validate_only, request_timeout=self.timeout,
                                                  operation_timeout=self.timeout)
                outcomes.update(self._wait_each(futures))
            return self._item_failures(outcomes)

        return self._call(run)

    def add_partitions(self, name: str, *, new_total: int, validate_only: bool = False) -> None:
        """CreatePartitions: grows the topic to `new_total` partitions (Kafka cannot shrink a topic)."""

        def run(admin: AdminClient) -> None:
            futures = admin.create_partitions([NewPartitions(name, new_total)], validate_only=validate_only,
                                              request_timeout=self.timeout, operation_timeout=self.timeout)
            try:
                self._wait(futures[name])
            except TopicNotFound as exc:
                raise self._topic_not_found(name, exc) from exc

        self._call(run)

    def delete_records(self, before: dict[PartitionRef, int]) -> dict[PartitionRef, int]:
        """DeleteRecords: removes every record below the given offset; returns each partition's new log start."""

        def run(admin: AdminClient) -> dict[PartitionRef, int]:
            requests = [TopicPartition(ref.topic, ref.partition, offset) for ref, offset in before.items()]
            futures = admin.delete_records(requests, request_timeout=self.timeout, operation_timeout=self.timeout)
            outcomes = self._wait_each({PartitionRef(tp.topic, tp.partition): f for tp, f in futures.items()})
            self._raise_partition_failures(outcomes)
            return {ref: o.low_watermark for ref, o in outcomes.items()}

        return self._call(run)

    def _topic_not_found(self, name: str, cause: KafkaGatewayError) -> TopicNotFound:
        return TopicNotFound(MSG_TOPIC_NOT_FOUND.format(topic=name, cluster=self.cluster), code=cause.code,
                             cluster=self.cluster)


def _topic_from_metadata(name: str, topic) -> TopicMetadata:
    partitions = tuple(
        PartitionMetadata(
            partition=p.id,
            leader=p.leader if p.leader >= 0 else None,
            replicas=tuple(p.replicas),
            isr=tuple(p.isrs),
            error=p.error.str() if p.error else None,
        )
        for p in sorted(topic.partitions.values(), key=lambda p: p.id)
    )
    return TopicMetadata(name=name, partitions=partitions, error=topic.error.str() if topic.error else None)


def _topic_from_description(description) -> TopicMetadata:
    partitions = tuple(
        PartitionMetadata(
            partition=p.id,
            leader=p.leader.id if p.leader is not None else None,
            replicas=tuple(n.id for n in p.replicas),
            isr=tuple(n.id for n in p.isr),
        )
        for p in sorted(description.partitions, key=lambda p: p.id)
    )
    return TopicMetadata(name=description.name, partitions=partitions, topic_id=_canonical_uuid(description.topic_id),
                         internal=description.is_internal)


def _canonical_uuid(value) -> str | None:
    """Kafka prints topic ids in base64; the internal records carry the raw 16 bytes: use one canonical form."""
    if value is None:
        return None
    mask = (1 << 64) - 1
    return str(uuid.UUID(int=((value.get_most_significant_bits() & mask) << 64)
                         | (value.get_least_significant_bits() & mask)))
