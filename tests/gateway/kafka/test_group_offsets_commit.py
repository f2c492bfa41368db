"""An admin offset commit is done only when Kafka says it is done: librdkafka's future succeeds while every
partition answers COORDINATOR_LOAD_IN_PROGRESS (a cluster's first commit, made while __consumer_offsets is
created and loaded) and nothing was written. The gateway sends the same commit again until it lands or the call's
bound passes; any other partition error is raised."""

from __future__ import annotations

import time
from concurrent.futures import Future
from types import SimpleNamespace

import pytest
from confluent_kafka import KafkaError

from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.errors import PartitionErrors
from gateway.kafka.librdkafka import client
from gateway.kafka.types import ClusterConnection, PartitionRef


def _answer(codes: list[int | None]) -> Future:
    """What librdkafka's future gives back for a commit of partitions 0.. of topic `t`: a result whose partitions
    carry the broker's error codes (None: committed)."""
    future: Future = Future()
    future.set_result(SimpleNamespace(topic_partitions=[
        SimpleNamespace(topic="t", partition=p, offset=7, error=KafkaError(code) if code is not None else None)
        for p, code in enumerate(codes)]))
    return future


def _scripted(monkeypatch, gateway: KafkaAdmin, answers: list[list[int | None]]) -> list:
    """Replaces the commit request of the gateway's real client with `answers`, one per request; returns the
    requests sent."""
    sent: list = []
    librdkafka = client.admin_client(gateway.connection)

    def send(requests, **kwargs):
        sent.append(requests)
        return {requests[0].group_id: _answer(answers[min(len(sent), len(answers)) - 1])}

    monkeypatch.setattr(librdkafka, "alter_consumer_group_offsets", send)
    return sent


def test_a_commit_answered_coordinator_loading_is_sent_again_until_it_lands(monkeypatch):
    gateway = KafkaAdmin(ClusterConnection("loading", "127.0.0.1:9"), timeout=10)
    loading = KafkaError.COORDINATOR_LOAD_IN_PROGRESS
    sent = _scripted(monkeypatch, gateway, [[loading, loading], [KafkaError.NOT_COORDINATOR] * 2, [None, None]])
    done = gateway.alter_group_offsets("g", {PartitionRef("t", 0): 7, PartitionRef("t", 1): 7})
    assert done == {PartitionRef("t", 0): 7, PartitionRef("t", 1): 7}
    assert len(sent) == 3


def test_other_partition_errors_are_raised_at_once(monkeypatch):
    gateway = KafkaAdmin(ClusterConnection("refusing", "127.0.0.1:9"), timeout=10)
    sent = _scripted(monkeypatch, gateway, [[None, KafkaError.UNKNOWN_MEMBER_ID]])
    with pytest.raises(PartitionErrors):
        gateway.alter_group_offsets("g", {PartitionRef("t", 0): 7, PartitionRef("t", 1): 7})
    assert len(sent) == 1


def test_a_coordinator_that_never_loads_fails_at_the_calls_bound(monkeypatch):
    gateway = KafkaAdmin(ClusterConnection("stuck", "127.0.0.1:9"), timeout=1.5)
    sent = _scripted(monkeypatch, gateway, [[KafkaError.COORDINATOR_LOAD_IN_PROGRESS]])
    started = time.monotonic()
    with pytest.raises(Exception, match="COORDINATOR_LOAD_IN_PROGRESS|[Cc]oordinator load"):
        gateway.alter_group_offsets("g", {PartitionRef("t", 0): 7})
    assert time.monotonic() - started < 1.5 + 1 and len(sent) > 1


@pytest.mark.kafka
def test_the_first_commits_on_a_fresh_cluster_all_land(tmp_path):
    """On a broker of its own, before it has a __consumer_offsets topic: three groups committed one after another
    as an admin, as a seeding script or a first reset does. Without the retry one of them was lost in about half of
    the fresh brokers tried (bench/group_types.py --smoke, 2026-11-29)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    from devstack.kafka import KafkaNode, free_ports

    port, controller = free_ports(2)
    node = KafkaNode(home=tmp_path / "kafka", port=port, controller_port=controller, heap=("-Xms128m", "-Xmx256m"),
                     offsets_partitions=1)
    with open(tmp_path / "broker.log", "w") as log:
        node.start(stdout=log)
    try:
        node.wait_ready()
        raw = AdminClient({"bootstrap.servers": node.bootstrap})
        raw.create_topics([NewTopic("t", 2, 1)])["t"].result()
        deadline = time.monotonic() + 30
        while not all(p.leader >= 0 for p in raw.list_topics("t", timeout=10).topics["t"].partitions.values()):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        gateway = KafkaAdmin(ClusterConnection("fresh", node.bootstrap), timeout=20)
        groups = [f"first-{i}" for i in range(3)]
        for i, group in enumerate(groups):
            gateway.alter_group_offsets(group, {PartitionRef("t", 0): 10 + i, PartitionRef("t", 1): 20 + i})
        assert {g.group_id for g in gateway.list_groups()} >= set(groups)
        committed = gateway.group_offsets(groups)
        assert committed == {group: {PartitionRef("t", 0): 10 + i, PartitionRef("t", 1): 20 + i}
                             for i, group in enumerate(groups)}
    finally:
        node.stop(kill=True)
