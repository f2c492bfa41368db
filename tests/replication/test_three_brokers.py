"""On a real three-broker KRaft cluster: a stopped broker shows as down on the brokers page and in the topic
counts and ISR; preferred leaders come back by election; a reassignment runs throttled, shows its progress, can
be cancelled, and leaves no throttle behind. Kafka's TopicCommand is the oracle for the replicas."""

from __future__ import annotations

import time
import uuid

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent
from console.clusters.models import Cluster
from console.clusters.selectors import cluster_admin
from gateway.kafka.errors import KafkaGatewayError
from tests.fixtures.faults import start_broker

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.django_db]


def _until(condition, what: str, timeout: float = 60.0):
    deadline, error = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            value = condition()
        except KafkaGatewayError as exc:  # a broker going or coming: ask again, as a person would
            value, error = None, exc
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what} (last error: {error})")


def _partitions(topic: str):
    return {p.partition: p for p in cluster_admin("triple").describe_topics([topic])[topic].partitions}


def _tool_replicas(three_brokers, topic: str) -> dict[int, list[int]]:
    result = three_brokers.nodes[0].run_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
                                             three_brokers.bootstrap, "--describe", "--topic", topic)
    assert result.returncode == 0, result.stderr
    found = {}
    for line in result.stdout.splitlines():
        if "Partition: " in line and "Replicas: " in line:
            fields = dict(part.split(": ", 1) for part in line.strip().split("\t") if ": " in part)
            found[int(fields["Partition"])] = [int(b) for b in fields["Replicas"].split(",")]
    return found


@pytest.fixture
def triple(three_brokers, db):
    Cluster.objects.update_or_create(name="triple", defaults={"bootstrap_servers": three_brokers.bootstrap})
    yield three_brokers
    for node in three_brokers.nodes:
        if node.process is None or node.process.poll() is not None:
            start_broker(node)


def test_a_stopped_broker_shows_and_preferred_leaders_come_back(triple, client_for, admin, capsys):
    topic = f"placed-{uuid.uuid4().hex[:6]}"
    from confluent_kafka.admin import AdminClient, NewTopic

    kafka_admin = AdminClient({"bootstrap.servers": triple.bootstrap})
    placement = [[3, 1, 2], [1, 2, 3], [2, 3, 1]]  # broker 3 is the preferred leader of partition 0
    for future in kafka_admin.create_topics([NewTopic(topic, 3, replica_assignment=placement)]).values():
        future.result(15)
    _until(lambda: all(len(p.isr) == 3 for p in _partitions(topic).values()), "a fully replicated topic")

    client = client_for(admin)
    client.get("/clusters/triple/brokers/")  # seen up
    triple.node(3).stop()
    _until(lambda: all(3 not in p.isr for p in _partitions(topic).values()), "broker 3 to leave the ISRs")
    brokers = _until(lambda: (page := client.get("/clusters/triple/brokers/").content.decode()).count("DOWN") == 1
                     and page, "the brokers page to show broker 3 down")
    assert brokers.count("rack-") == 3 and "1 broker down" in brokers
    from topics.selectors import topic_snapshot_refresh

    topic_snapshot_refresh("triple", wait_s=30)  # what beat does; the list reads that table
    listing = client.get("/clusters/triple/topics/", {"q": topic}).content.decode()
    assert '<span class="bad">3 / 0</span>' in listing
    overview = client.get(f"/clusters/triple/topics/{topic}/").content.decode()
    assert ('<span class="value">3</span><span class="label">Under-replicated partitions</span>' in overview)
    partitions = client.get(f"/clusters/triple/topics/{topic}/", {"tab": "partitions"}).content.decode()
    assert partitions.count('<span class="bad">under-replicated</span>') == 3
    call_command("replication", "--cluster", "triple", "brokers")
    table = capsys.readouterr().out
    row3 = next(line for line in table.splitlines() if line.startswith("3 "))
    assert "DOWN" in row3 and "rack-c" in row3 and "Under-replicated partitions: " in table
    assert "yes" not in row3  # the controller is one of the nodes still up

    start_broker(triple.node(3))
    _until(lambda: all(len(p.isr) == 3 for p in _partitions(topic).values()), "broker 3 back in the ISRs")
    assert _partitions(topic)[0].leader != 3  # another replica took over and keeps leading
    call_command("replication", "--cluster", "triple", "elect", "--topic", topic)
    preview = capsys.readouterr().out
    assert "Would elect the preferred leader of 1 partition(s)" in preview and f"{topic}-0: leader" in preview
    overview = client.get("/clusters/triple/replication/").content.decode()
    assert "Leaders that are not preferred (1)" in overview and f">{topic}</a></td><td>0</td>" in overview
    call_command("replication", "--cluster", "triple", "elect", "--topic", f"{topic}:1,2")
    assert "Would elect the preferred leader of 0 partition(s)" in capsys.readouterr().out  # chosen partitions only
    call_command("replication", "--cluster", "triple", "elect", "--topic", f"{topic}:0", "--confirm",
                 "--actor", admin.username, "--reason", "after the restart")
    # The election is done when the command returns; the broker answering metadata may learn of it a moment later.
    _until(lambda: [p.leader for _, p in sorted(_partitions(topic).items())] == [3, 1, 2], "broker 3 to lead again",
           timeout=15)
    event = AuditEvent.objects.get(action="leaders.elect", outcome="success")
    assert event.after == {f"{topic}-0": {"leader": 3, "error": None}}
    with pytest.raises(CommandError, match="already led by its preferred replica"):
        call_command("replication", "--cluster", "triple", "elect", "--topic", topic, "--confirm",
                     "--actor", admin.username, "--reason", "again")


def test_a_throttled_reassignment_shows_progress_cancels_and_completes(triple, admin, capsys):
    from confluent_kafka import Producer

    slow, grow = f"slow-{uuid.uuid4().hex[:6]}", f"grow-{uuid.uuid4().hex[:6]}"
    admin_client = cluster_admin("triple")
    admin_client.create_topic(slow, partitions=1, replication_factor=1, configs={})
    admin_client.create_topic(grow, partitions=2, replication_factor=1, configs={})
    producer = Producer({"bootstrap.servers": triple.bootstrap, "linger.ms": 20, "compression.type": "none"})
    for n in range(4000):
        producer.produce(slow, value=bytes(1000), partition=0)
    assert producer.flush(30) == 0
    del producer  # else it keeps trying the brokers after the session stops them
    source = _partitions(slow)[0].replicas[0]
    destination = next(b for b in (1, 2, 3) if b != source)
    acting = ["--actor", admin.username, "--reason", "drill"]

    # 4 MB at 10 kB/s: the move cannot finish during the test, so it is there to watch and to cancel.
    call_command("replication", "--cluster", "triple", "reassign", "--topic", slow, "--assignment",
                 f"0={destination}", "--throttle", "10000", "--confirm", *acting)
    call_command("replication", "--cluster", "triple", "status", "--topic", slow)
    assert f"adding [{destination}] (0% caught up), removing [{source}]" in capsys.readouterr().out
    throttled = admin_client.describe_configs("broker", [str(source)])[str(source)]
    assert throttled["leader.replication.throttled.rate"].value == "10000"
    with pytest.raises(CommandError, match="is being reassigned already"):
        call_command("replication", "--cluster", "triple", "reassign", "--topic", slow, "--assignment",
                     f"0={source}", "--confirm", *acting)

    call_command("replication", "--cluster", "triple", "cancel", "--topic", slow, *acting)
    _until(lambda: not admin_client.list_reassignments(), "the cancelled reassignment to go")
    # The controller has dropped the move; the broker TopicCommand asks may learn of it a moment later.
    _until(lambda: _tool_replicas(triple, slow) == {0: [source]}, "TopicCommand to show the old replicas")
    assert "leader.replication.throttled.rate" not in {
        k for k, v in admin_client.describe_configs("broker", [str(source)])[str(source)].items()
        if v.source == "dynamic-broker"}
    assert AuditEvent.objects.filter(action="reassignment.cancel", outcome="success").count() == 1

    call_command("replication", "--cluster", "triple", "reassign", "--topic", grow, "--replication-factor", "3")
    assert "Would move 2 partition(s)" in capsys.readouterr().out
    call_command("replication", "--cluster", "triple", "reassign", "--topic", grow, "--replication-factor", "3",
                 "--throttle", "10000000", "--confirm", *acting)
    _until(lambda: not admin_client.list_reassignments(), "the replication factor change to complete")
    call_command("replication", "--cluster", "triple", "finish", "--topic", grow, "--actor", admin.username)
    _until(lambda: sorted(map(sorted, _tool_replicas(triple, grow).values())) == [[1, 2, 3], [1, 2, 3]],
           "TopicCommand to show three replicas")
    assert not {k for k, v in admin_client.describe_configs("topic", [grow])[grow].items()
                if k.endswith("throttled.replicas") and v.source == "topic"}
