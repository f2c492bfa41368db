"""The gateway against the real session broker, and against addresses where no broker answers."""

from __future__ import annotations

import socket
import time
import uuid

import pytest

from gateway.kafka import errors
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import ClusterConnection

pytestmark = pytest.mark.kafka


@pytest.fixture
def admin(kafka_node) -> KafkaAdmin:
    return KafkaAdmin(ClusterConnection("test", kafka_node.bootstrap), timeout=3.0)


@pytest.fixture(scope="module")
def two_topics(kafka_node) -> list[str]:
    names = [f"gw-{uuid.uuid4().hex[:8]}-{i}" for i in (1, 2)]
    for name, partitions in zip(names, (1, 3)):
        result = kafka_node.run_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", kafka_node.bootstrap,
                                     "--create", "--topic", name, "--partitions", str(partitions))
        assert result.returncode == 0, result.stderr
    return names


def test_describe_cluster_names_the_single_kraft_node(admin, kafka_node):
    description = admin.describe_cluster()

    assert description.cluster_id
    assert description.controller_id == 1
    assert [(b.id, b.host, b.port, b.is_controller) for b in description.brokers] == [(1, "127.0.0.1", kafka_node.port, True)]


def test_list_topics_returns_partitions_with_leader_replicas_and_isr(admin, two_topics):
    topics = {t.name: t for t in admin.list_topics()}

    first, second = (topics[name] for name in two_topics)
    assert first.partition_count == 1 and second.partition_count == 3
    assert second.replication_factor == 1
    assert [(p.partition, p.leader, p.replicas, p.isr) for p in second.partitions] == [
        (0, 1, (1,), (1,)), (1, 1, (1,), (1,)), (2, 1, (1,), (1,))
    ]
    assert not any(p.under_replicated or p.offline for p in second.partitions)


def test_describe_topics_batches_and_reports_ids_and_internal_flag(admin, two_topics):
    described = admin.describe_topics(two_topics)

    assert set(described) == set(two_topics)
    assert all(t.topic_id and t.internal is False for t in described.values())
    assert described[two_topics[1]].partition_count == 3


def test_unknown_topic_maps_to_topic_not_found_naming_it(admin, two_topics):
    with pytest.raises(errors.TopicNotFound) as caught:
        admin.describe_topics([two_topics[0], "no-such-topic"])

    assert "no-such-topic" in caught.value.message


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_closed_port_raises_cluster_unavailable_within_the_timeout():
    admin = KafkaAdmin(ClusterConnection("down", f"127.0.0.1:{_closed_port()}"), timeout=2.0)

    started = time.monotonic()
    with pytest.raises(errors.ClusterUnavailable) as caught:
        admin.describe_cluster()

    assert time.monotonic() - started < 2.0 + 1.5
    assert "down" in caught.value.message and "did not answer" in caught.value.message


@pytest.mark.parametrize("call", ["describe_cluster", "list_topics"])
def test_silent_server_raises_cluster_unavailable_within_the_timeout(silent_server, call):
    admin = KafkaAdmin(ClusterConnection("silent", silent_server), timeout=2.0)

    started = time.monotonic()
    with pytest.raises(errors.ClusterUnavailable):
        getattr(admin, call)()

    assert time.monotonic() - started < 2.0 + 1.5


def test_one_request_too_big_for_its_bound_does_not_mark_a_healthy_cluster_unreachable(kafka_node, two_topics):
    """A request that outlasts its bound on a cluster that answers (all partitions of a large cluster, say) fails
    alone: the cluster's other calls are not made to fail fast for the back-off's length."""
    connection = ClusterConnection("big-request", kafka_node.bootstrap)
    hurried = KafkaAdmin(connection, timeout=0.001, unreachable_backoff=30.0)
    with pytest.raises(errors.ClusterUnavailable) as slow:
        hurried.list_topics()
    assert slow.value.code == "_SLOW_REQUEST" and "is up" in slow.value.message
    patient = KafkaAdmin(connection, timeout=5.0, unreachable_backoff=30.0)
    assert patient.describe_cluster().broker_count == 1


def test_after_one_timeout_further_calls_fail_fast(silent_server):
    admin = KafkaAdmin(ClusterConnection("silent-again", silent_server), timeout=2.0, unreachable_backoff=30.0)
    with pytest.raises(errors.ClusterUnavailable):
        admin.describe_cluster()

    started = time.monotonic()
    with pytest.raises(errors.ClusterUnavailable):
        admin.list_topics()

    assert time.monotonic() - started < 0.2
