"""Shared by the transactions tests: a transaction left open on the session broker."""

from __future__ import annotations

import uuid

import pytest

from tests.fixtures.kafka import begin_transaction


@pytest.fixture
def open_transaction(kafka_node, topic_factory, produce, local_cluster):
    """A transaction left open over partitions 0 and 1 of a topic, behind two committed plain records."""
    topic = topic_factory("tx-open", partitions=2)
    produce(topic, [(0, None, b"plain", None), (1, None, b"plain", None)])
    transactional_id = f"billing-{uuid.uuid4().hex[:8]}"
    producer = begin_transaction(kafka_node.bootstrap, topic, [f"pending-{i}".encode() for i in range(3)],
                                 partitions=2, transactional_id=transactional_id, timeout_ms=120_000)
    yield topic, transactional_id
    producer.abort_transaction(15)
