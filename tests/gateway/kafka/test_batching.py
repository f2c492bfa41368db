"""Calls over many groups keep a bounded number of requests in flight (gateway.kafka.librdkafka.base.MAX_IN_FLIGHT)
and still answer for every group. The real client is watched, not replaced: each send goes through to the broker."""

from __future__ import annotations

import uuid

import pytest

from gateway.kafka.librdkafka import base, client
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import ClusterConnection, PartitionRef

pytestmark = pytest.mark.kafka


def test_group_offsets_of_many_groups_are_fetched_a_window_at_a_time(kafka_node, topic_factory, commit,
                                                                     monkeypatch):
    topic = topic_factory("batched", partitions=2)
    groups = [f"batched {i} /#%-{uuid.uuid4().hex[:6]}" for i in range(23)]
    for i, group in enumerate(groups):
        commit(group, {(topic, 0): i, (topic, 1): 100 + i})
    monkeypatch.setattr(base, "MAX_IN_FLIGHT", 4)
    gateway = KafkaAdmin(ClusterConnection("batched", kafka_node.bootstrap), timeout=10)
    librdkafka = client.admin_client(gateway.connection)
    sent: list = []
    most_in_flight = 0
    real_send = librdkafka.list_consumer_group_offsets

    def watched(requests, **kwargs):
        nonlocal most_in_flight
        futures = real_send(requests, **kwargs)
        sent.extend(futures.values())
        most_in_flight = max(most_in_flight, sum(not future.done() for future in sent))
        return futures

    monkeypatch.setattr(librdkafka, "list_consumer_group_offsets", watched)
    offsets = gateway.group_offsets(groups + ["never committed"])
    assert len(sent) == len(groups) + 1 and 0 < most_in_flight <= 4
    for i, group in enumerate(groups):
        assert offsets[group] == {PartitionRef(topic, 0): i, PartitionRef(topic, 1): 100 + i}
    assert offsets["never committed"] == {}
