"""Done-when of issue 34 on the session's three-broker cluster: a stopped broker raises exactly one under-replicated
alert (through an existing channel), its return one resolve, and its tile says why it gave no figures meanwhile."""

from __future__ import annotations

import time
import uuid

import pytest

from alerts.evaluation import alerts_evaluate
from alerts.models import Alert
from alerts.services import alert_rule_create
from brokers.models import BrokerState
from brokers.sampler import broker_metrics_sample_all
from brokers.services import metrics_source_set
from console.audit.actor import Actor
from console.clusters.models import Cluster
from tests.alerts.conftest import Receiver
from tests.fixtures.faults import broker_down, start_broker

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.django_db]


def _until(condition, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def _sampled(cluster, check):
    """Samples (as beat does) until `check` holds on the stored states, then evaluates the rules once."""
    def sampled():
        broker_metrics_sample_all()
        states = {s.broker: s for s in BrokerState.objects.filter(cluster=cluster)}
        return states if check(states) else None

    return _until(sampled, "the sampled figures")


def test_a_stopped_broker_raises_one_under_replicated_alert_and_its_return_one_resolve(three_brokers, admin,
                                                                                       settings):
    receiver = Receiver()
    settings.ALERT_WEBHOOKS = f"oncall={receiver.url}"
    Cluster.objects.update_or_create(name="trio", defaults={"bootstrap_servers": three_brokers.bootstrap})
    actor = Actor(user=admin, source="cli")
    metrics_source_set(actor=actor, cluster="trio", reason="test",
                       jmx=",".join(f"{n.node_id}=127.0.0.1:{n.jmx_port}" for n in three_brokers.nodes))
    alert_rule_create(actor=actor, name="trio-replicas", kind="under_replicated", cluster="trio", webhook="oncall")
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"replicated-{uuid.uuid4().hex[:6]}"
    kafka_admin = AdminClient({"bootstrap.servers": three_brokers.bootstrap})  # kept: its futures die with it
    for future in kafka_admin.create_topics([NewTopic(topic, 3, replication_factor=3)]).values():
        future.result(60)  # three brokers on two cores beside another session: an election may take a while
    _sampled("trio", lambda s: len(s) == 3 and all(x.latest.get("under_replicated") == 0 and not x.last_error
                                                   for x in s.values()))
    assert alerts_evaluate().opened == 0
    node = three_brokers.node(3)
    try:
        node.stop()
        states = _sampled("trio", lambda s: s[3].error_kind and sum(
            s[b].latest.get("under_replicated", 0) for b in (1, 2)) > 0)
        assert states[3].error_kind == "refused"
        first = alerts_evaluate()
        broker_metrics_sample_all()
        again = alerts_evaluate()  # still down: the same alert, nothing sent twice
        assert (first.opened, first.fired, again.opened, again.fired) == (1, 1, 0, 0)
    finally:
        if broker_down(node):
            start_broker(node)
    try:
        _sampled("trio", lambda s: not broker_down(node) and s[3].last_error_at < s[3].last_ok_at and all(
            s[b].latest.get("under_replicated") == 0 for b in (1, 2, 3)))
        assert alerts_evaluate().resolved == 1
    finally:  # the cluster is the session's: the next tests count leaders that are not preferred, and would see ours
        kafka_admin.delete_topics([topic])[topic].result(15)
        _until(lambda: topic not in kafka_admin.list_topics(timeout=5).topics, "the topic to be deleted")
    alert = Alert.objects.get(rule__name="trio-replicas")
    assert alert.state == Alert.RESOLVED and "under-replicated in cluster trio" in alert.reason
    states = [p["alert"]["state"] for p in receiver.received]
    assert states == ["firing", "resolved"]
    assert "/clusters/trio/health/" in receiver.received[0]["alert"]["link"]
    receiver.close()
