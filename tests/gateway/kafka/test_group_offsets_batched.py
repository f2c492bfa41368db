"""Committed offsets of many groups through the Java Admin's multi-group OffsetFetch: the same answer as
librdkafka's one-request-per-group path, for any group id, in one gateway call per batch."""

from __future__ import annotations

import time
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.kafka.java import bridge
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.errors import ClusterUnavailable
from gateway.kafka.types import ClusterConnection, PartitionRef

pytestmark = pytest.mark.kafka

# Any Unicode (no lone surrogates: neither client can send them), markup, quotes, separators Jackson's JSON must
# escape. Not NUL: librdkafka, which seeds the commits and is the comparison, passes group ids as C strings and
# cuts them at the first NUL (it would commit and read "a" for "a\0b"); the Java Admin keeps them whole.
GROUP_IDS = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1, max_size=80)


def _seed(bootstrap: str, offsets: dict[str, dict[tuple[str, int], int]]) -> None:
    """OffsetCommit as an admin for groups with no members, all sent before any is awaited. A commit can fail per
    partition (its coordinator still loading, say) without failing the future, so those are sent again."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    pending = dict(offsets)
    for _ in range(20):
        futures = {group: admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
            group, [TopicPartition(t, p, o) for (t, p), o in committed.items()])], request_timeout=30)[group]
            for group, committed in pending.items()}
        failed = {group for group, future in futures.items()
                  if any(tp.error for tp in future.result().topic_partitions)}
        pending = {group: pending[group] for group in failed}
        if not pending:
            return
        time.sleep(0.5)
    raise AssertionError(f"commits of {sorted(pending)} kept failing")


@pytest.fixture
def gateway(kafka_node):
    return KafkaAdmin(ClusterConnection("batched-java", kafka_node.bootstrap), timeout=10)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(GROUP_IDS, min_size=1, max_size=25, unique=True))
def test_batched_offsets_match_the_per_group_path_for_any_group_id(gateway, kafka_node, topic_factory, ids):
    topic = topic_factory("lag-7-3", partitions=3)  # dashes and digits before the partition's own
    wanted = {group: {(topic, i % 3): 10 * i + 1, (topic, (i + 1) % 3): 5} for i, group in enumerate(ids)}
    _seed(kafka_node.bootstrap, wanted)
    never = f"never committed {uuid.uuid4().hex}"
    batched = gateway.group_offsets_batched(ids + [never])
    assert batched == gateway.group_offsets(ids + [never])
    for group, committed in wanted.items():  # hypothesis repeats ids across examples: this example's topic only
        assert {r: o for r, o in batched[group].items() if r.topic == topic} == {
            PartitionRef(t, p): o for (t, p), o in committed.items()}
    assert batched[never] == {}


def test_thousands_of_groups_cost_one_gateway_call(gateway, kafka_node, topic_factory, monkeypatch):
    topic = topic_factory("many", partitions=2)
    groups = [f"many {i} <b>\"'#%/ {uuid.uuid4().hex[:4]}" for i in range(3000)]
    _seed(kafka_node.bootstrap, {g: {(topic, 0): i, (topic, 1): i + 1} for i, g in enumerate(groups)})
    calls = []
    real = bridge.JavaCalls._java

    def counted(self, call):
        calls.append(call)
        return real(self, call)

    monkeypatch.setattr(bridge.JavaCalls, "_java", counted)
    found = gateway.group_offsets_batched(groups)
    assert len(calls) == 1
    assert len(found) == 3000
    assert all(found[g] == {PartitionRef(topic, 0): i, PartitionRef(topic, 1): i + 1} for i, g in enumerate(groups))


def test_a_cluster_that_does_not_answer_is_unavailable(silent_server):
    gateway = KafkaAdmin(ClusterConnection("batched-silent", silent_server), timeout=2)
    with pytest.raises(ClusterUnavailable):
        gateway.group_offsets_batched(["any"])
