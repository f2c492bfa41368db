"""End to end on the real broker: a group whose member keeps polling but stops committing stalls; the lag sampler
sees it, the rule fires exactly once to the webhook and by mail, and clears once when the group catches up."""

import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from confluent_kafka import Consumer, TopicPartition
from django.core import mail

from alerts.evaluation import alerts_evaluate
from alerts.services import alert_rule_create
from console.audit.actor import Actor
from offsets.lag.sampler import lag_sample
from offsets.models import GroupLagStatus
from tests.offsets.conftest import wait_for_state

pytestmark = [pytest.mark.django_db, pytest.mark.kafka]


class StalledMember:
    """A subscribed consumer that commits offset 0 once, then polls without committing until told to catch up."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        # Only this object's thread touches the consumer: librdkafka's consumer is not to be shared between threads.
        self.catch_up, self.stop, self.caught_up = threading.Event(), threading.Event(), threading.Event()
        self.committed_once = threading.Event()
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                                  "session.timeout.ms": 6000, "auto.offset.reset": "earliest"})
        self.topic = topic
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.consumer.subscribe([self.topic])
        while not self.stop.is_set():
            self.consumer.poll(0.2)
            if not self.committed_once.is_set() and self.consumer.assignment():
                self.consumer.commit(offsets=[TopicPartition(self.topic, 0, 0)], asynchronous=False)
                self.committed_once.set()
            if self.catch_up.is_set() and not self.caught_up.is_set():
                self.consumer.commit(offsets=[TopicPartition(self.topic, 0, 5)], asynchronous=False)
                self.caught_up.set()
        self.consumer.close()


def test_a_truly_stalled_group_alerts_once_and_resolves_once(local_cluster, kafka_node, topic_factory, produce,
                                                              operator, webhook):
    topic = topic_factory("stall")
    produce(topic, [(0, None, b"record %d" % i, None) for i in range(5)])
    group = f"stall-{uuid.uuid4().hex[:8]}"
    alert_rule_create(actor=Actor(user=operator, source="web"), name="stalled-groups", kind="status",
                      group_pattern="stall-*", statuses=["ERR", "STOP"], for_minutes=1, webhook="oncall",
                      emails=["oncall@example.com"], reason="test")
    member = StalledMember(kafka_node.bootstrap, group, topic)
    try:
        wait_for_state(group, {"Stable"})
        assert member.committed_once.wait(15)
        now = datetime.now(UTC)
        statuses = []
        for sweep in range(7):  # every 30 s of sampler time; Kafka answers for real each time
            at = now + timedelta(seconds=30 * sweep)
            lag_sample(cluster="local", now=at)
            alerts_evaluate(now=at)
            statuses.append(GroupLagStatus.objects.get(cluster="local", group=group).status)
        assert statuses[:2] == ["", ""] and set(statuses[2:]) == {"ERR"}
        assert len(webhook.received) == 1 and len(mail.outbox) == 1
        fired = webhook.received[0]
        assert fired["alert"]["group"] == group and fired["alert"]["state"] == "firing"
        assert "has not moved" in fired["alert"]["reason"] and "lag 5" in fired["alert"]["reason"]
        assert group in mail.outbox[0].subject and "[FIRING]" in mail.outbox[0].subject

        member.catch_up.set()
        assert member.caught_up.wait(15)
        for sweep in range(7, 10):
            at = now + timedelta(seconds=30 * sweep)
            lag_sample(cluster="local", now=at)
            alerts_evaluate(now=at)
        assert GroupLagStatus.objects.get(cluster="local", group=group).status == "OK"
        assert [m["alert"]["state"] for m in webhook.received] == ["firing", "resolved"]
        assert len(mail.outbox) == 2 and "[RESOLVED]" in mail.outbox[1].subject
    finally:
        member.stop.set()
        member.thread.join(15)
