"""A cluster registered with SASL_SSL (SCRAM-SHA-512) or mutual-TLS settings works for every page, and for the
Kafka tool the console runs (ConsumerGroupCommand deleting a group's offsets), with the settings as registered:
secrets by environment variable name, CA and client certificate by path."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from console.audit.actor import Actor
from console.clusters.models import Cluster
from offsets.services import group_offsets_delete
from tests.fixtures.secured_kafka import secured_settings

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.mark.parametrize("listener", ["sasl_ssl", "mtls"])
def test_every_page_and_the_offset_delete_tool_work(listener, secured_kafka, client_for, admin):
    from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"sec-{listener}"
    Cluster.objects.create(name=name, **secured_settings(secured_kafka, listener=listener))
    topic, group = f"sec-topic-{uuid.uuid4().hex[:6]}", f"sec group/{uuid.uuid4().hex[:6]}"
    plain = {"bootstrap.servers": secured_kafka.bootstrap}
    kafka_admin = AdminClient(plain)
    for future in kafka_admin.create_topics([NewTopic(topic, 2, 1)]).values():
        future.result(15)
    producer = Producer(plain)
    for n in range(10):
        producer.produce(topic, value=b"v%d" % n, partition=n % 2)
    assert producer.flush(15) == 0
    consumer = Consumer({**plain, "group.id": group, "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic, 0, 3), TopicPartition(topic, 1, 4)], asynchronous=False)
    consumer.close()

    client = client_for(admin)
    pages = [f"/clusters/{name}/topics/", f"/clusters/{name}/topics/{topic}/",
             f"/clusters/{name}/topics/{topic}/messages/", f"/clusters/{name}/brokers/", f"/clusters/{name}/brokers/1/",
             f"/clusters/{name}/groups/", reverse("offsets:detail", args=[name, group]),
             f"/clusters/{name}/transactions/", f"/clusters/{name}/access/acls/", f"/clusters/{name}/access/users/",
             f"/clusters/{name}/replays/", "/clusters/"]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, (url, response.content.decode()[:500])
    from topics.selectors import topic_snapshot_refresh

    topic_snapshot_refresh(name, wait_s=30)  # what beat does; the list reads that table
    assert topic in client.get(f"/clusters/{name}/topics/").content.decode()

    after = group_offsets_delete(actor=Actor(user=admin, source="cli"), cluster=name, group=group, topic=topic,
                                 partitions=[0], confirm=group, reason="secured tool path")
    assert after == {topic: {"0": None}}
    committed = kafka_admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(
        group, [TopicPartition(topic, 0), TopicPartition(topic, 1)])])[group].result(15)
    assert [(tp.partition, tp.offset) for tp in committed.topic_partitions] == [(0, -1001), (1, 4)]
