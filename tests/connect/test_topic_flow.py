"""connect/topic_flow.py: what a configuration says a connector reads, writes and makes Kafka create."""

import re

from connect.topic_flow import (
    DLQ, IDENTITY_POLICY, MIRROR_CHECKPOINT, MIRROR_HEARTBEAT, MIRROR_SOURCE, SINK, SOURCE, may_write, topic_flow,
)
from tests.connect.conftest import FILE_SINK, FILE_SOURCE

WITNESS = "_kafka_console_audit"


def _matches(pattern: str, topic: str) -> bool:
    return re.fullmatch(pattern, topic) is not None


def test_a_sink_reads_its_topics_and_writes_only_its_dead_letter_queue():
    flow = topic_flow(FILE_SINK, SINK, {"topics": "orders, payments", "file": "/x", DLQ: "dlq"})
    assert flow.reads == ("orders", "payments") and flow.writes == ("dlq",) and not flow.creates
    assert not may_write(topic_flow(FILE_SINK, SINK, {"topics": WITNESS}), WITNESS, pattern_matches=_matches)
    assert topic_flow(FILE_SINK, SINK, {"topics.regex": "o.*"}).reads_pattern == "o.*"


def test_a_source_writes_every_topic_its_settings_name_and_prefixes_cover():
    flow = topic_flow(FILE_SOURCE, SOURCE, {"topic": WITNESS, "file": "/x"})
    assert flow.writes == (WITNESS,) and may_write(flow, WITNESS, pattern_matches=_matches)
    prefixed = topic_flow("com.example.JdbcSource", SOURCE, {"topic.prefix": "_kafka_console_", "table": "audit"})
    assert may_write(prefixed, WITNESS, pattern_matches=_matches)
    assert not may_write(topic_flow(FILE_SOURCE, SOURCE, {"topic": "lines"}), WITNESS, pattern_matches=_matches)


def test_a_topic_routing_transformation_makes_the_written_topics_unknown():
    routed = {"topic": "lines", "transforms": "route, cast",
              "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
              "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value"}
    flow = topic_flow(FILE_SOURCE, SOURCE, routed)
    assert "route" in flow.unknown_writes and "cast" not in flow.unknown_writes
    assert may_write(flow, WITNESS, pattern_matches=_matches)
    harmless = {"topic": "lines", "transforms": "cast",
                "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value"}
    assert topic_flow(FILE_SOURCE, SOURCE, harmless).unknown_writes == ""
    custom = {"topic": "lines", "transforms": "x", "transforms.x.type": "com.example.Anything"}
    assert topic_flow(FILE_SOURCE, SOURCE, custom).unknown_writes


def test_topic_creation_settings_and_mirror_maker_create_topics():
    assert topic_flow(FILE_SOURCE, SOURCE, {"topic": "t", "topic.creation.default.partitions": "3"}).creates
    for plugin in (MIRROR_SOURCE, MIRROR_CHECKPOINT, MIRROR_HEARTBEAT):
        assert topic_flow(plugin, SOURCE, {"source.cluster.alias": "a"}).creates, plugin


def test_mirror_maker_writes_where_its_replication_policy_puts_remote_topics():
    default = topic_flow(MIRROR_SOURCE, SOURCE, {"source.cluster.alias": "dc1", "topics": ".*",
                                                 "source.cluster.bootstrap.servers": "h:9092"})
    assert default.reads_elsewhere == "h:9092"
    assert may_write(default, "dc1.orders", pattern_matches=_matches)
    assert not may_write(default, WITNESS, pattern_matches=_matches)
    sneaky = topic_flow(MIRROR_SOURCE, SOURCE, {"source.cluster.alias": "_kafka", "replication.policy.separator": "_"})
    assert may_write(sneaky, WITNESS, pattern_matches=_matches)
    identity = topic_flow(MIRROR_SOURCE, SOURCE, {"replication.policy.class": IDENTITY_POLICY, "topics": "orders,_k.*"})
    assert may_write(identity, WITNESS, pattern_matches=_matches)
    assert not may_write(identity, "payments", pattern_matches=_matches)
    other = topic_flow(MIRROR_SOURCE, SOURCE, {"replication.policy.class": "com.example.Policy"})
    assert other.unknown_writes


def test_a_producer_override_writes_to_another_cluster():
    flow = topic_flow(FILE_SOURCE, SOURCE, {"topic": "t", "producer.override.bootstrap.servers": "evil:9092"})
    assert flow.writes_elsewhere == "evil:9092"
