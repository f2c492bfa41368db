"""CIDR ranges in ACL hosts (KIP-1276) on real brokers. They came with Kafka 4.4 (metadata.version 4.4-IV1), not
with 4.3.1: this file runs a Kafka 4.4.0 broker of its own (from the Maven jars `make test` fetches) beside the
session's 4.3.1 one. On 4.4 a range created with the console is listed identically by Kafka's own AclCommand and
applies to the clients of the range only; on 4.3.1, whose authorizer would keep the range as text no address equals,
the console refuses it, saying why, and changes nothing. The cluster's metadata.version is read as Kafka's
FeatureCommand reads it."""

from __future__ import annotations

import re
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from django.core.management import CommandError, call_command

from access.bindings import METADATA_VERSIONS
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.paths import CACHE_DIR
from devstack.kafka import KafkaNode, free_ports

pytestmark = [pytest.mark.kafka, pytest.mark.parity, pytest.mark.django_db]

KAFKA_NEXT_LIBS = CACHE_DIR / "kafka-4.4.0" / "libs"
NEXT = "kafka-4-4"
ACLS = "org.apache.kafka.tools.AclCommand"
FEATURES = "org.apache.kafka.tools.FeatureCommand"
HX = {"HX-Request": "true"}


@pytest.fixture(scope="module")
def kafka_next(tmp_path_factory):
    """A Kafka 4.4.0 broker whose own clients are no super users (ANONYMOUS is one on the session's broker), so a
    DENY binding applies to this test's consumer; what no binding names stays allowed."""
    assert list(KAFKA_NEXT_LIBS.glob("kafka_2.13-4.4.0.jar")), f"no Kafka 4.4.0 in {KAFKA_NEXT_LIBS}: run make test-deps"
    home = tmp_path_factory.mktemp("kafka-4.4")
    port, controller = free_ports(2)
    node = KafkaNode(home=home / "node", port=port, controller_port=controller, heap=("-Xms128m", "-Xmx256m"),
                     libs=KAFKA_NEXT_LIBS, properties={"super.users": "User:nobody-here",
                                                       "allow.everyone.if.no.acl.found": "true"})
    with open(home / "broker.log", "w") as log:
        node.start(stdout=log)
        try:
            node.wait_ready()
            yield node
        finally:
            node.stop()


@pytest.fixture
def next_cluster(db, kafka_next):
    from console.clusters.models import Cluster

    return Cluster.objects.update_or_create(name=NEXT, defaults={"bootstrap_servers": kafka_next.bootstrap})[0]


def _tool(node: KafkaNode, main: str, *args: str) -> list[str]:
    result = node.run_tool(main, "--bootstrap-server", node.bootstrap, *args)
    assert result.returncode == 0, result.stderr
    return [line.rstrip() for line in result.stdout.splitlines() if line.strip()]


def _ours(capsys, *args: str) -> list[str]:
    call_command("acls", *args)
    return [line.rstrip() for line in capsys.readouterr().out.splitlines() if line.strip()]


def _bindings(lines: list[str]) -> list[str]:
    return sorted(line for line in lines if "(principal=" in line)


def _finalized_by_tool(node: KafkaNode) -> dict[str, str]:
    """FeatureCommand's FinalizedVersionLevel of each feature: metadata.version by name, the others by level."""
    found = {}
    for line in _tool(node, FEATURES, "describe"):
        name, level = re.search(r"Feature: (\S+)", line), re.search(r"FinalizedVersionLevel: (\S+)", line)
        if name and level:
            found[name[1]] = level[1]
    return found


def _read_one(bootstrap: str, topic: str) -> str:
    """What a consumer from 127.0.0.1 gets at offset 0: the record's value, or the broker's error code."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False, "socket.timeout.ms": 5000})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline, errors = time.monotonic() + 20, []
        while time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            if message.error():
                if message.error().code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
                    return "TOPIC_AUTHORIZATION_FAILED"
                errors.append(message.error().str())
                continue
            return message.value().decode()
        return f"nothing within 20 s (errors: {errors[-3:]})"
    finally:
        consumer.close()


def test_the_finalized_features_are_the_feature_tools(kafka_node, local_cluster, kafka_next, next_cluster):
    for node, cluster, expected in ((kafka_node, "local", "4.3-IV0"), (kafka_next, NEXT, "4.4-IV2")):
        ours = cluster_admin(cluster).finalized_features().levels
        tool = _finalized_by_tool(node)
        assert tool["metadata.version"] == expected
        assert METADATA_VERSIONS[ours["metadata.version"]] == tool["metadata.version"]
        # The tool prints every feature the brokers support, one not finalized at level 0.
        assert set(ours) <= set(tool)
        assert {k: str(ours.get(k, 0)) for k in tool if k != "metadata.version"} == {
            k: v for k, v in tool.items() if k != "metadata.version"}


def test_a_range_made_here_is_listed_as_kafka_acls_lists_it_and_applies_to_its_addresses_only(
        kafka_next, next_cluster, admin, capsys):
    topic = f"ranged-{uuid.uuid4().hex[:6]}"
    cluster_admin(NEXT).create_topic(topic, partitions=1, replication_factor=1, configs={})
    producer = Producer({"bootstrap.servers": kafka_next.bootstrap})
    producer.produce(topic, b"hello")
    assert producer.flush(10) == 0

    def add(principal: str, host: str, permission: str) -> None:
        _ours(capsys, "add", "--cluster", NEXT, "--principal", principal, "--resource-type", "TOPIC",
              "--resource-name", topic, "--operation", "READ", "--permission", permission, "--host", host,
              "--confirm", "--actor", admin.username, "--reason", "subnet rule")

    # Once a topic has bindings, only what they allow is allowed: this broker's clients may read it from anywhere,
    # but a DENY wins over an ALLOW for the addresses it covers.
    _tool(kafka_next, ACLS, "--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Read", "--operation",
          "Describe", "--topic", topic)
    assert _read_one(kafka_next.bootstrap, topic) == "hello"
    # A range the client is outside of: its read goes on.
    add("User:ANONYMOUS", "10.0.0.0/8", "DENY")
    assert _read_one(kafka_next.bootstrap, topic) == "hello"
    # Typed loosely, stored in the shortest form; an IPv6 range too.
    add("User:ANONYMOUS", " 127.0.0.0/8 ", "DENY")
    add("User:reporting", "2001:DB8:0::/32", "ALLOW")
    assert _read_one(kafka_next.bootstrap, topic) == "TOPIC_AUTHORIZATION_FAILED"

    tool = _bindings(_tool(kafka_next, ACLS, "--list", "--topic", topic))
    assert tool == _bindings(_ours(capsys, "list", "--cluster", NEXT, "--resource-type", "TOPIC",
                                   "--resource-name", topic, "--pattern-type", "LITERAL"))
    assert sorted(line.split(", permissionType")[0].strip() for line in tool) == [
        "(principal=User:ANONYMOUS, host=*, operation=DESCRIBE", "(principal=User:ANONYMOUS, host=*, operation=READ",
        "(principal=User:ANONYMOUS, host=10.0.0.0/8, operation=READ",
        "(principal=User:ANONYMOUS, host=127.0.0.0/8, operation=READ",
        "(principal=User:reporting, host=2001:db8::/32, operation=READ"]
    assert AuditEvent.objects.filter(action="acl.create", outcome="success", cluster=NEXT).count() == 3

    # Removing the range that holds the client lets it read again, and leaves the others.
    preview = _ours(capsys, "remove", "--cluster", NEXT, "--resource-type", "TOPIC", "--resource-name", topic,
                    "--pattern-type", "LITERAL", "--host", "127.0.0.0/8")
    assert preview[0] == "Would delete 1 binding(s):"
    _ours(capsys, "remove", "--cluster", NEXT, "--resource-type", "TOPIC", "--resource-name", topic,
          "--pattern-type", "LITERAL", "--host", "127.0.0.0/8", "--confirm", "1", "--actor", admin.username,
          "--reason", "subnet retired")
    assert _read_one(kafka_next.bootstrap, topic) == "hello"
    assert len(_bindings(_tool(kafka_next, ACLS, "--list", "--topic", topic))) == 4


def test_the_page_previews_a_range_and_refuses_a_mistyped_one_at_the_host_field(kafka_next, next_cluster, admin,
                                                                                client_for):
    form = {"principal": "User:x", "resource_type": "TOPIC", "resource_name": "t", "pattern_type": "LITERAL",
            "operations": ["READ"], "permission": "ALLOW", "host": "10.0.0.1/8", "reason": "r"}
    page = client_for(admin).post(f"/clusters/{NEXT}/access/acls/create/preview/", form, headers=HX)
    text = page.content.decode()
    assert page.status_code == 400 and 'data-field="host"' in text and "the range it means is 10.0.0.0/8" in text
    page = client_for(admin).post(f"/clusters/{NEXT}/access/acls/create/preview/", {**form, "host": "10.0.0.0/8"},
                                  headers=HX)
    assert page.status_code == 200 and "1 binding to create" in page.content.decode()
    assert "10.0.0.0/8" in page.content.decode()


def test_a_range_is_refused_on_kafka_4_3_saying_why_and_nothing_changes(kafka_node, local_cluster, admin, capsys,
                                                                         client_for):
    principal = f"User:subnet-{uuid.uuid4().hex[:6]}"
    add = ["add", "--principal", principal, "--resource-type", "TOPIC", "--resource-name", "orders",
           "--operation", "READ", "--host", "10.0.0.0/8"]
    for args in (add, [*add, "--confirm", "--actor", admin.username, "--reason", "subnet rule"]):
        with pytest.raises(CommandError, match=r"metadata.version 4.3-IV0 \(level 30\).*never match anyone"):
            call_command("acls", *args)
    assert _bindings(_tool(kafka_node, ACLS, "--list", "--principal", principal)) == []
    assert not AuditEvent.objects.filter(action="acl.create").exists()

    form = {"principal": principal, "resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL",
            "operations": ["READ"], "permission": "ALLOW", "host": "10.0.0.0/8", "reason": ""}
    page = client_for(admin).post("/clusters/local/access/acls/create/preview/", form, headers=HX)
    text = page.content.decode()
    assert page.status_code == 400 and 'data-field="host"' in text and "4.4-IV1" in text
