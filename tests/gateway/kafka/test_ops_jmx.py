"""The JMX reader (gateway/kafka/java/ops_jmx.py) against the session's brokers, whose JMX asks for a password as
`make run`'s does: the same figures as Kafka's own JmxTool read at the same moment (partitions' shares of their
retention.bytes too), nothing for a client without the password, and a clear reason for a port that refuses, hangs
or wants other credentials."""

from __future__ import annotations

import os
import time
import uuid

import pytest

from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.errors import InvalidRequest
from gateway.kafka.broker_mbeans import BROKER_MBEANS, RETENTION_SHARE
from gateway.kafka.types import (JMX_CREDENTIALS, JMX_REFUSED, JMX_TIMEOUT, JMX_TLS, ClusterConnection, JmxEndpoint)
from tests.fixtures.kafka import (fill_partition, jmx_endpoint, jmx_tool_values, retention_share_when,
                                  run_jmx_tool)
from tests.fixtures.secured_kafka import JMX_PASSWORD_ENV

pytestmark = [pytest.mark.kafka, pytest.mark.parity]

# A Yammer meter's one-minute rate is an EWMA ticked every 5 s: between two reads it moves by at most one tick's
# decay, exp(-5/60) ~ 0.92, plus what arrived in between (nothing, on a topic only this test writes).
RATE_TOLERANCE = 0.09
# Gauges computed at each read from the processors' own meters, so they are rates in all but name.
RATE_LIKE = ("NetworkProcessorAvgIdlePercent:Value", "OneMinuteRate")
HISTOGRAM_LIKE = ("Percentile", ":Mean", ":Max", ":Min", ":StdDev")


def _admin(node) -> KafkaAdmin:
    return KafkaAdmin(ClusterConnection("jmx", node.bootstrap), timeout=5.0)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= RATE_TOLERANCE * max(abs(a), abs(b)) + 1e-9


def test_the_readers_figures_are_jmxtools_at_the_same_moment(kafka_node, topic_factory, produce):
    topic = topic_factory("jmx")
    produce(topic, [(0, None, b"x" * 200, None) for _ in range(300)])
    admin = _admin(kafka_node)
    endpoint = jmx_endpoint(kafka_node)
    before = admin.read_jmx([endpoint])[0]
    tool = jmx_tool_values(kafka_node, [name for name, _ in BROKER_MBEANS.values()]
                           + [f"kafka.server:type=BrokerTopicMetrics,name={m},topic={topic}"
                              for m in ("BytesInPerSec", "MessagesInPerSec")])
    after = admin.read_jmx([endpoint])[0]
    assert before.ok and after.ok, (before.error, after.error)
    assert before.topics[topic]["messages_in"].count == 300
    assert before.topics[topic]["bytes_in"].count > 300 * 200
    # the broker's figures and this topic's (the session's other topics have meters too; the tool was not asked)
    wanted = [k for k in after.attributes if ",topic=" not in k or f",topic={topic}:" in k]
    assert [k for k in wanted if k not in tool] == []
    for key in wanted:
        ours = after.attributes[key]
        earlier, theirs = before.attributes.get(key, ours), tool[key]
        if key.endswith(RATE_LIKE):
            assert _close(theirs, ours) or _close(theirs, earlier), (key, earlier, theirs, ours)
        elif key.endswith(":Count"):  # monotonic: the tool read between our two readings
            assert earlier <= theirs <= ours, (key, earlier, theirs, ours)
        elif key.endswith(HISTOGRAM_LIKE):  # a sampled reservoir: it moves between reads, requests or not
            assert min(earlier, ours) <= theirs <= max(earlier, ours), (key, earlier, theirs, ours)
        else:  # gauges: exactly one of the values we read around it
            assert theirs in (earlier, ours), (key, earlier, theirs, ours)
    assert len(wanted) >= 20
    assert after.gauges["under_replicated"] == tool[
        "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions:Value"] == 0
    assert after.gauges["active_controllers"] == 1
    assert 0 <= after.gauges["request_idle_pct"] <= 100


def _settled_share(node, topic: str, partition: int) -> int:
    """The share once two retention checks in a row gave it: a check that ran while the fill was still landing
    gives a smaller one, which the next check replaces (CI read 47 % here, then JmxTool 72 %)."""
    seen: list[int] = []
    for _ in range(10):
        seen.append(retention_share_when(node, topic, partition, lambda s: s > 0, "above 0"))
        if len(seen) > 1 and seen[-1] == seen[-2]:
            return seen[-1]
        time.sleep(1.5)  # past the next check: log.retention.check.interval.ms is 1000 on this broker
    raise AssertionError(f"the share of {topic}-{partition} did not settle: {seen}")


def test_retention_shares_are_jmxtools_on_the_same_broker_state(jbod_kafka):
    """KIP-1257's gauge per partition, on the broker that checks retention every second: the reader's figure is the
    one JmxTool prints for the same MBean; the broker gives the reader only the partitions above 0, and JmxTool
    shows 0 for an empty partition and for a topic without retention.bytes (-1), however full."""
    admin = _admin(jbod_kafka)
    limited, unlimited = f"share-{uuid.uuid4().hex[:8]}", f"share-free-{uuid.uuid4().hex[:8]}"
    segment = {"segment.bytes": str(1024 * 1024)}
    admin.create_topic(limited, partitions=2, replication_factor=1, configs={**segment, "retention.bytes": "2097152"})
    admin.create_topic(unlimited, partitions=1, replication_factor=1, configs=segment)
    fill_partition(jbod_kafka, limited, 0, 1500)  # about 1.5 MB of 2 MiB: some 70 %
    fill_partition(jbod_kafka, unlimited, 0, 1500)
    share = _settled_share(jbod_kafka, limited, 0)
    names = [f"{RETENTION_SHARE},topic={limited},partition=0", f"{RETENTION_SHARE},topic={limited},partition=1",
             f"{RETENTION_SHARE},topic={unlimited},partition=0"]
    tool = jmx_tool_values(jbod_kafka, names)  # nothing is written meanwhile: each check computes the same share
    after = admin.read_jmx([jmx_endpoint(jbod_kafka)], timeout=10)[0]
    assert tool[f"{names[0]}:Value"] == after.attributes[f"{names[0]}:Value"] == share == \
        after.retention_shares[limited][0]
    assert 60 <= share <= 80
    assert tool[f"{names[1]}:Value"] == tool[f"{names[2]}:Value"] == 0
    assert f"{names[1]}:Value" not in after.attributes and unlimited not in after.retention_shares


def test_closed_silent_and_unknown_ports_say_why_within_the_bound(kafka_node, closed_port, silent_server):
    admin = _admin(kafka_node)
    silent_port = int(silent_server.rpartition(":")[2])
    began = time.monotonic()
    # A bound a real JMX read meets on a busy machine too: under the whole suite's load 2 s was not always enough.
    good, closed, silent = admin.read_jmx([jmx_endpoint(kafka_node),
                                           JmxEndpoint(2, "127.0.0.1", closed_port),
                                           JmxEndpoint(3, "127.0.0.1", silent_port)], timeout=5.0)
    assert time.monotonic() - began < 7
    assert good.ok and good.gauges, good.error
    assert closed.error_kind == JMX_REFUSED and "refused the connection" in closed.error, closed.error
    assert silent.error_kind == JMX_TIMEOUT and "did not answer within 5 s" in silent.error
    # While the silent port still holds the earlier read, the next one is not queued behind it.
    again = admin.read_jmx([JmxEndpoint(3, "127.0.0.1", silent_port)], timeout=2.0)[0]
    assert again.error_kind == JMX_TIMEOUT and "earlier read" in again.error


def test_the_brokers_jmx_answers_no_client_without_the_password(kafka_node):
    """As on `make run`'s brokers: JmxTool, or any JMX client of a user of this host, without the password gets no
    MBean; the console's reader without it, or with another, is told the credentials were refused."""
    tool = run_jmx_tool(kafka_node, ["kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions"],
                        password=False)
    assert tool.returncode != 0 and "UnderReplicatedPartitions" not in tool.stdout
    assert "Authentication failed" in tool.stderr or "SecurityException" in tool.stderr, tool.stderr[-2000:]
    right = jmx_endpoint(kafka_node)
    wrong = JmxEndpoint(1, "127.0.0.1", kafka_node.jmx_port, username=right.username, password=uuid.uuid4().hex)
    anonymous = JmxEndpoint(1, "127.0.0.1", kafka_node.jmx_port)
    ok, refused, none = _admin(kafka_node).read_jmx([right, wrong, anonymous], timeout=30)  # 10 s: a loaded host
    assert ok.ok and ok.gauges["active_controllers"] == 1, ok.error
    assert refused.error_kind == none.error_kind == JMX_CREDENTIALS
    assert not refused.gauges and not none.gauges


def test_hostile_addresses_never_reach_the_jvm(kafka_node):
    for host in ("127.0.0.1/evil", "host name", "a@b", "x'y", ""):
        with pytest.raises(InvalidRequest, match="Not a JMX address"):
            _admin(kafka_node).read_jmx([JmxEndpoint(1, host, 9999)])


def test_a_tls_agent_with_a_password_takes_its_ca_and_the_right_password_only(secured_kafka):
    from gateway.kafka.java import bridge

    bridge.bridge_stop()  # a JVM of this test's own: no earlier test's trust in it
    admin = _admin(secured_kafka)
    port, ca = secured_kafka.jmx_port, str(secured_kafka.security.tls.ca)
    password = os.environ[JMX_PASSWORD_ENV]
    # Java's own CA certificates do not know the session's CA: the handshake fails, and says so.
    untrusted = admin.read_jmx([JmxEndpoint(1, "127.0.0.1", port, username="monitor", password=password,
                                            tls=True)])[0]
    assert untrusted.error_kind == JMX_TLS and "TLS handshake" in untrusted.error
    # The CA asked for after a TLS connection was made: the reader starts a JVM that trusts it (a cold JVM and a
    # first handshake: more than a sample's 5 s on a busy machine, so this read is given longer).
    right = JmxEndpoint(1, "127.0.0.1", port, username="monitor", password=password, tls=True, ca_file=ca)
    ok = admin.read_jmx([right], timeout=30)[0]
    assert ok.ok and ok.gauges["under_replicated"] == 0, ok.error
    wrong = JmxEndpoint(1, "127.0.0.1", port, username="monitor", password=uuid.uuid4().hex, tls=True, ca_file=ca)
    anonymous = JmxEndpoint(1, "127.0.0.1", port, tls=True, ca_file=ca)
    plain = JmxEndpoint(1, "127.0.0.1", port, username="monitor", password=password)
    again, refused, none, cleartext = admin.read_jmx([right, wrong, anonymous, plain], timeout=15)
    assert again.ok and refused.error_kind == JMX_CREDENTIALS and none.error_kind == JMX_CREDENTIALS
    assert cleartext.error and not cleartext.ok
    assert wrong.password not in refused.error and wrong.password not in repr(wrong)


def test_a_closed_port_reads_as_refused_when_a_process_wide_converter_fails_on_the_bridges_exception(
        kafka_node, closed_port, spark_converter_failing):
    """Once a SparkSession has run in a process, pyspark's converter wraps py4j's module-wide get_return_value
    and looks the bridge's Java exceptions up in Spark's JVM by object id; where that id names another object
    there, it fails with a Py4JError (seen on CI: "exceptionString([class …JavaSparkContext]) does not exist").
    The same failure, made certain here: the reading still says the connection was refused."""
    closed = _admin(kafka_node).read_jmx([JmxEndpoint(2, "127.0.0.1", closed_port)], timeout=10.0)[0]
    assert closed.error_kind == JMX_REFUSED and "refused the connection" in closed.error, closed.error
