"""Admin operations on one cluster. Every call is bounded by `timeout` seconds."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from confluent_kafka import TopicCollection
from confluent_kafka.admin import AdminClient

from console.kafka import client
from console.kafka.errors import MSG_TOPIC_NOT_FOUND, ClusterUnavailable, TopicNotFound
from console.kafka.futures import future_result, futures_outcomes
from console.kafka.mapping import map_exception
from console.kafka.types import BrokerInfo, ClusterConnection, ClusterDescription, PartitionMetadata, TopicMetadata

T = TypeVar("T")


class KafkaAdmin:
    """Composes an AdminClient; returns frozen dataclasses and raises console.kafka.errors only."""

    def __init__(self, connection: ClusterConnection, *, timeout: float, unreachable_backoff: float = 5.0) -> None:
        self.connection = connection
        self.timeout = timeout
        self.unreachable_backoff = unreachable_backoff

    @property
    def cluster(self) -> str:
        return self.connection.name

    def _call(self, operation: Callable[[AdminClient], T]) -> T:
        client.check_not_known_unreachable(self.connection)
        admin = client.admin_client(self.connection)
        try:
            result = operation(admin)
        except ClusterUnavailable as exc:
            client.mark_unreachable(self.connection, exc.message, self.unreachable_backoff)
            raise
        except Exception as exc:
            mapped = map_exception(exc, cluster=self.cluster, timeout=self.timeout)
            if isinstance(mapped, ClusterUnavailable):
                client.mark_unreachable(self.connection, mapped.message, self.unreachable_backoff)
            raise mapped from exc
        finally:
            admin.poll(0)
        client.mark_reachable(self.connection)
        return result

    def _wait(self, future):
        return future_result(future, cluster=self.cluster, timeout=self.timeout)

    def describe_cluster(self) -> ClusterDescription:
        """DescribeCluster: cluster id, controller and live brokers."""

        def run(admin: AdminClient) -> ClusterDescription:
            result = self._wait(admin.describe_cluster(request_timeout=self.timeout))
            controller_id = result.controller.id if result.controller is not None else None
            brokers = tuple(
                sorted(
                    (
                        BrokerInfo(
                            id=node.id, host=node.host, port=node.port, rack=node.rack,
                            is_controller=node.id == controller_id,
                        )
                        for node in result.nodes
                    ),
                    key=lambda b: b.id,
                )
            )
            return ClusterDescription(cluster_id=result.cluster_id, controller_id=controller_id, brokers=brokers)

        return self._call(run)

    def list_topics(self) -> list[TopicMetadata]:
        """One Metadata request for all topics: partitions with leader, replicas and ISR."""

        def run(admin: AdminClient) -> list[TopicMetadata]:
            metadata = admin.list_topics(timeout=self.timeout)
            topics = []
            for name, topic in metadata.topics.items():
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
                topics.append(TopicMetadata(name=name, partitions=partitions, error=topic.error.str() if topic.error else None))
            return sorted(topics, key=lambda t: t.name)

        return self._call(run)

    def describe_topics(self, names: list[str]) -> dict[str, TopicMetadata]:
        """DescribeTopics in one request: topic ids, the internal flag and per-partition replicas and ISR.

        Raises TopicNotFound naming the first unknown topic.
        """

        def run(admin: AdminClient) -> dict[str, TopicMetadata]:
            if not names:
                return {}
            futures = admin.describe_topics(TopicCollection(list(names)), request_timeout=self.timeout)
            outcomes = futures_outcomes(futures, cluster=self.cluster, timeout=self.timeout)
            for name, outcome in outcomes.items():
                if isinstance(outcome, TopicNotFound):
                    raise TopicNotFound(MSG_TOPIC_NOT_FOUND.format(topic=name, cluster=self.cluster),
                                        code=outcome.code, cluster=self.cluster)
                if isinstance(outcome, Exception):
                    raise outcome
            return {name: _topic_from_description(d) for name, d in outcomes.items()}

        return self._call(run)


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
    return TopicMetadata(name=description.name, partitions=partitions, topic_id=str(description.topic_id),
                         internal=description.is_internal)
