"""The protocol migration on the session broker: a classic group of two real members, shown as classic with its
members and a verdict; a rolling restart of its members onto group.protocol=consumer (Kafka's online upgrade),
shown as a consumer group with a classic member in between and as moved at the end, with the time of the move and
its rebalances before and after; the classic_protocol alert firing before the move and resolving after it. And on a
broker of its own whose migration policy is 'disabled', a group with a static member and another assignor is shown
blocked, with each reason."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import pytest

from alerts.evaluation import alerts_evaluate
from alerts.models import Alert, AlertRule
from brokers.conf import LOCAL_JMX_PASSWORD_ENV, LOCAL_JMX_USER
from brokers.services import metrics_source_set
from console.audit.actor import Actor
from console.clusters.selectors import cluster_admin
from gateway.kafka.errors import KafkaGatewayError
from offsets.history import recorder
from offsets.lag.sampler import lag_sample
from offsets.models import GroupTypeChange, GroupTypeSeen
from tests.fixtures.java_members import JavaMember
from tests.fixtures.members import Member

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def wait_protocols(group: str, wanted: dict[str, str], *, group_type: str, timeout: float = 60.0):
    """Until the group is of `group_type` with exactly the members `wanted` (client id -> "classic" or
    "consumer"), each holding partitions, as Kafka's Java Admin describes it."""
    deadline, seen = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            seen = cluster_admin("local").describe_group_protocols([group])[group]
        except KafkaGatewayError:
            time.sleep(0.5)
            continue
        protocols = {m.client_id: ("classic" if seen.group_type == "classic" or m.upgraded is False else "consumer")
                     for m in seen.members}
        if seen.group_type == group_type and protocols == wanted and seen.state == "Stable":
            return seen
        time.sleep(0.5)
    raise AssertionError(f"{group} never reached {group_type} {wanted}; last seen {seen}")


def _page(client) -> str:
    response = client.get("/clusters/local/protocol-migration/")
    assert response.status_code == 200
    return response.content.decode()


def _article(page: str, group: str) -> str:
    from django.utils.html import escape

    start = page.index(f'data-group="{escape(group)}" data-verdict=')
    return page[start:page.index("</article>", start)]


def test_a_classic_group_moves_online_and_the_page_follows(local_cluster, kafka_node, topic_factory, admin, viewer,
                                                           client_for):
    metrics_source_set(actor=Actor(user=admin, source="cli"), cluster="local", jmx=f"1=127.0.0.1:{kafka_node.jmx_port}",
                       username=LOCAL_JMX_USER, password_env=LOCAL_JMX_PASSWORD_ENV, reason="client software")
    AlertRule.objects.create(name="still-classic", kind=AlertRule.Kind.CLASSIC_PROTOCOL, group_pattern="mig-*",
                             for_minutes=0, webhook="", emails=["oncall@example.com"], created_by="test",
                             created_at=datetime.now(UTC))
    topic = topic_factory("mig", partitions=4)
    group = f"mig-{uuid.uuid4().hex[:8]}"
    a = Member(kafka_node.bootstrap, group, topic, "mig-a", "classic")
    b = Member(kafka_node.bootstrap, group, topic, "mig-b", "classic")
    members = [a, b]
    try:
        wait_protocols(group, {"mig-a": "classic", "mig-b": "classic"}, group_type="classic")
        lag_sample(cluster="local")
        assert GroupTypeSeen.objects.get(cluster="local", group=group).group_type == "classic"
        alerts_evaluate()
        fired = Alert.objects.get(rule__name="still-classic", group=group)
        assert fired.state == Alert.FIRING and "classic rebalance protocol" in fired.reason

        client = client_for(viewer)
        page = _page(client)
        article = _article(page, group)
        print(article)
        assert 'data-verdict="ready"' in article, article
        assert "mig-a" in article and "mig-b" in article and article.count(">classic</td>") == 2
        assert "assignor range" in article
        assert "group.consumer.migration.policy is &#x27;bidirectional&#x27;" in article
        assert 'data-policy="bidirectional"' in page
        # The brokers' own count of client software, read over JMX: this test's consumers are librdkafka's.
        software = page[page.index('id="client-software"'):page.index('id="classic-groups"')]
        print(software)
        assert "confluent-kafka-python" in software and "apache-kafka-java" in software
        assert "not per group member" in software

        # The rolling restart: each member in turn leaves and comes back on the consumer protocol.
        a.leave()
        members.append(a := Member(kafka_node.bootstrap, group, topic, "mig-a", "consumer"))
        mixed = wait_protocols(group, {"mig-a": "consumer", "mig-b": "classic"}, group_type="consumer")
        assert [m.upgraded for m in mixed.members] == [True, False]  # sorted by client id
        page = _page(client)
        article = _article(page, group)
        assert 'id="mixed-groups"' in page and "1 of 2 members still use the classic protocol" in article
        assert ">consumer</td>" in article and ">classic</td>" in article

        b.leave()
        members.append(Member(kafka_node.bootstrap, group, topic, "mig-b", "consumer"))
        wait_protocols(group, {"mig-a": "consumer", "mig-b": "consumer"}, group_type="consumer")
        lag_sample(cluster="local")
        recorder.record_from_topic("local", should_stop=lambda: False, until_caught_up=True)

        change = GroupTypeChange.objects.get(cluster="local", group=group)
        assert (change.before, change.after) == ("classic", "consumer")
        assert change.previous_sweep_at is not None and change.previous_sweep_at < change.at
        alerts_evaluate()
        assert Alert.objects.get(rule__name="still-classic", group=group).state == Alert.RESOLVED

        page = _page(client)
        assert f'data-group="{group}" data-verdict=' not in page  # neither classic nor mixed any more
        moves = page[page.index('id="moves"'):]
        row = moves[moves.index(f'<tr data-group="{group}">'):]
        row = row[:row.index("</tr>")]
        print(row)
        assert f"between {change.previous_sweep_at:%Y-%m-%d %H:%M:%S} and {change.at:%Y-%m-%d %H:%M:%S} UTC" in row
        cells = row.split("<td>")
        assert "none recorded" not in cells[3]  # the recorder stored the first consumer-protocol epoch
        before, after = int(cells[4].split()[0]), int(cells[5].split()[0])
        assert before >= 1 and after >= 1  # the classic generations of a and b, and the consumer epochs since
        assert "in 7 days" in cells[4]
        # the consumer epochs' reconciliation was recorded: each member reported the last one, so it settled
        assert "settled in" in cells[5] and "settled in" not in cells[4]
    finally:
        for member in members:
            member.leave()


def test_a_group_of_kafkas_java_consumers_moves_online_too(local_cluster, kafka_node, topic_factory, admin, viewer,
                                                          client_for, tmp_path):
    """The same rolling restart with Kafka's own Java consumer (VerifiableConsumer from the jars), the client the
    consumer protocol was first made for: each step on the page, and every partition held by one member at the end."""
    metrics_source_set(actor=Actor(user=admin, source="cli"), cluster="local", jmx=f"1=127.0.0.1:{kafka_node.jmx_port}",
                       username=LOCAL_JMX_USER, password_env=LOCAL_JMX_PASSWORD_ENV, reason="client software")
    topic = topic_factory("java-mig", partitions=4)
    group = f"java-mig-{uuid.uuid4().hex[:8]}"
    members = [JavaMember(kafka_node.bootstrap, group, topic, name, "classic", home=tmp_path)
               for name in ("java-a", "java-b")]
    try:
        wait_protocols(group, {"java-a": "classic", "java-b": "classic"}, group_type="classic", timeout=90)
        lag_sample(cluster="local")  # a sweep sees it classic: the move is then seen by the next one
        client = client_for(viewer)
        article = _article(_page(client), group)
        assert 'data-verdict="ready"' in article, article
        assert "assignor range" in article and "java-a" in article and "java-b" in article
        software = _page(client)
        software = software[software.index('id="client-software"'):software.index('id="classic-groups"')]
        assert "apache-kafka-java" in software and "4.3.1" in software, software

        for moved, name in enumerate(("java-a", "java-b"), start=1):
            old = next(m for m in members if m.client_id == name and m.protocol == "classic")
            old.leave()
            members.append(JavaMember(kafka_node.bootstrap, group, topic, name, "consumer", home=tmp_path))
            wanted = {"java-a": "consumer", "java-b": "consumer" if moved == 2 else "classic"}
            wait_protocols(group, wanted, group_type="consumer", timeout=90)
            page = _page(client)
            if moved == 1:
                assert "1 of 2 members still use the classic protocol" in _article(page, group)
        assert f'data-group="{group}" data-verdict=' not in page  # neither classic nor mixed any more

        running = [m for m in members if m.process.poll() is None]
        deadline = time.monotonic() + 30  # the tool prints its assignment a moment after the broker says Stable
        while time.monotonic() < deadline:
            held = sorted(p for m in running for p in m.assigned())
            if held == [(topic, n) for n in range(4)]:
                break
            time.sleep(0.5)
        assert held == [(topic, n) for n in range(4)], [m.events()[-3:] for m in running]

        lag_sample(cluster="local")
        change = GroupTypeChange.objects.get(cluster="local", group=group)
        assert (change.before, change.after) == ("classic", "consumer")
    finally:
        for member in members:
            member.leave()


def test_a_disabled_policy_blocks_and_a_static_member_is_named(tmp_path, client_for, viewer):
    from console.clusters.models import Cluster
    from devstack.kafka import KafkaNode, free_ports

    port, controller = free_ports(2)
    node = KafkaNode(home=tmp_path / "kafka", port=port, controller_port=controller, heap=("-Xms128m", "-Xmx256m"),
                     offsets_partitions=1, properties={"group.consumer.migration.policy": "disabled"})
    with open(tmp_path / "broker.log", "w") as log:
        node.start(stdout=log)
    member = None
    try:
        node.wait_ready()
        Cluster.objects.create(name="strict", bootstrap_servers=node.bootstrap)
        cluster_admin("strict").create_topic("orders", partitions=2, replication_factor=1, configs={})
        group = f"static-{uuid.uuid4().hex[:6]}"
        member = Member(node.bootstrap, group, "orders", "billing-1", "classic",
                        extra={"group.instance.id": "billing-host-1", "partition.assignment.strategy": "roundrobin"})
        deadline = time.monotonic() + 60
        while (seen := cluster_admin("strict").describe_group_protocols([group])[group]).state != "Stable":
            assert time.monotonic() < deadline, seen
            time.sleep(0.5)

        page = client_for(viewer).get("/clusters/strict/protocol-migration/")
        assert page.status_code == 200
        article = _article(page.content.decode(), group)
        assert 'data-verdict="blocked"' in article, article
        assert "group.consumer.migration.policy is &#x27;disabled&#x27;" in article
        assert "1 of 1 members are static (group.instance.id)" in article
        assert "Client-side assignor &#x27;roundrobin&#x27; is one of Kafka&#x27;s own" in article
        assert "billing-host-1" in article or "billing-1" in article
    finally:
        if member is not None:
            member.leave()
        node.stop(kill=True)
