"""The groups list's state and member count of many groups through the Java Admin, batched per coordinator: the same
state and members as librdkafka's describe (one request per group), for live groups of both protocols, groups that
only committed, groups that are gone, and any group id."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.kafka.admin import KafkaAdmin
from console.kafka.types import ClusterConnection, GroupBrief
from tests.console.kafka.test_group_offsets_batched import GROUP_IDS, _seed

pytestmark = pytest.mark.kafka


@pytest.fixture
def gateway(kafka_node):
    return KafkaAdmin(ClusterConnection("briefs-java", kafka_node.bootstrap), timeout=10)


@pytest.fixture
def polling(kafka_node):
    """polling(group, topic, protocol): a subscribed consumer that keeps polling until the test ends."""
    from confluent_kafka import Consumer

    stops: list[tuple[threading.Event, threading.Thread]] = []

    def start(group: str, topic: str, protocol: str) -> None:
        config = {"bootstrap.servers": kafka_node.bootstrap, "group.id": group, "enable.auto.commit": False,
                  "group.protocol": protocol}
        stop = threading.Event()

        def poll() -> None:
            consumer = Consumer(config)
            consumer.subscribe([topic])
            while not stop.is_set():
                consumer.poll(0.2)
            consumer.close()

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        stops.append((stop, thread))

    yield start
    for stop, thread in stops:
        stop.set()
        thread.join(15)


def _until_stable(gateway: KafkaAdmin, groups: list[str], timeout: float = 45.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        described = gateway.describe_groups(groups)
        if all(d.state == "Stable" and d.members for d in described.values()):
            return
        time.sleep(0.3)
    raise AssertionError(f"not every group of {groups} became Stable with members")


def test_live_committed_and_gone_groups_read_as_librdkafkas_describe_reads_them(gateway, kafka_node, topic_factory,
                                                                                 polling):
    topic = topic_factory("briefs", partitions=2)
    classic, consumer = f"classic {uuid.uuid4().hex[:6]}", f"kip-848/{uuid.uuid4().hex[:6]}"
    committed, gone = f"only committed #{uuid.uuid4().hex[:6]}", f"never existed {uuid.uuid4().hex}"
    polling(classic, topic, "classic")
    polling(consumer, topic, "consumer")
    _seed(kafka_node.bootstrap, {committed: {(topic, 0): 1}})
    _until_stable(gateway, [classic, consumer])

    briefs = gateway.group_briefs([classic, consumer, committed, gone])
    described = gateway.describe_groups([classic, consumer, committed, gone])

    assert briefs[classic] == GroupBrief(classic, "Stable", 1)
    assert briefs[consumer] == GroupBrief(consumer, "Stable", 1)
    assert briefs[committed] == GroupBrief(committed, "Empty", 0)
    assert briefs[gone] == GroupBrief(gone, "Dead", 0)
    assert {g: (b.state, b.members) for g, b in briefs.items()} == \
        {g: (d.state, len(d.members)) for g, d in described.items()}


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(GROUP_IDS, min_size=1, max_size=20, unique=True))
def test_any_group_id_comes_back_under_its_own_name(gateway, kafka_node, topic_factory, ids):
    topic = topic_factory("briefs-any", partitions=1)
    _seed(kafka_node.bootstrap, {group: {(topic, 0): 3} for group in ids})

    briefs = gateway.group_briefs(ids + ids[:1])  # a repeated id is asked once

    assert briefs == {group: GroupBrief(group, "Empty", 0) for group in ids}


def test_no_groups_asks_nothing(gateway):
    assert gateway.group_briefs([]) == {}
