"""A replay to another cluster, between secured listeners: Spark's Kafka source reads over SASL_SSL
(SCRAM-SHA-512) and the exactly-once topic sink writes over mutual TLS, with the settings the clusters were
registered with (secrets by environment variable, certificates by path); keys, headers and partitions arrive as
they were. Wrong credentials are refused at submit, within seconds."""

from __future__ import annotations

import time
import uuid

import pytest

from console.audit.actor import Actor
from console.clusters.models import Cluster
from gateway.kafka.errors import NotAuthorized
from sparkjobs.models import ReplayJob
from sparkjobs.services import replay_submit
from tests.fixtures.secured_kafka import secured_settings
from tests.sparkjobs.conftest import wait_finished

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.django_db(transaction=True)]


def test_replay_from_sasl_ssl_to_mtls(replay_env, secured_kafka, make_user, monkeypatch):
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    Cluster.objects.create(name="secured", **secured_settings(secured_kafka))
    Cluster.objects.create(name="secured-mtls", **secured_settings(secured_kafka, listener="mtls"))
    source, target = f"secure-src-{uuid.uuid4().hex[:6]}", f"secure-dst-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": secured_kafka.bootstrap})
    for future in admin.create_topics([NewTopic(source, 2, 1), NewTopic(target, 2, 1)]).values():
        future.result(15)
    producer = Producer({"bootstrap.servers": secured_kafka.bootstrap})
    for p in (0, 1):
        for i in range(10):
            producer.produce(source, key=f"k{p}-{i}".encode(), value=f"v{p}-{i}".encode(), partition=p,
                             headers=[("trace", f"t{p}-{i}".encode())])
    assert producer.flush(15) == 0
    del producer
    actor = Actor(user=make_user("secure-replayer", "operator"), source="cli")

    job = wait_finished(replay_submit(actor=actor, cluster="secured", topic=source, partitions=None,
                                      start="offsets:0=0,1=5", end="latest", sink="topic", sink_topic=target,
                                      sink_cluster="secured-mtls", keep_partitions=True, reason="secured drill"))

    assert job.state == ReplayJob.State.SUCCEEDED, job.error
    assert (job.records_read, job.records_written) == (15, 15)
    consumer = Consumer({"bootstrap.servers": secured_kafka.bootstrap, "group.id": f"check-{target}",
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe([target])
    received = []
    deadline = time.monotonic() + 30
    while len(received) < 15 and time.monotonic() < deadline:
        received += [m for m in consumer.consume(50, timeout=0.5) if m.error() is None]
    consumer.close()
    assert sorted((m.partition(), m.key(), m.value(), dict(m.headers())["trace"]) for m in received) == sorted(
        (p, f"k{p}-{i}".encode(), f"v{p}-{i}".encode(), f"t{p}-{i}".encode())
        for p, first in ((0, 0), (1, 5)) for i in range(first, 10))

    # A password that is not the user's: the console says so at submit, and nothing is queued.
    monkeypatch.setenv("CONSOLE_SECRET_WRONG_KAFKA_PASSWORD", "not-the-password")
    wrong = secured_settings(secured_kafka)
    wrong["secret_env"] = {"sasl.password": "CONSOLE_SECRET_WRONG_KAFKA_PASSWORD"}
    Cluster.objects.create(name="secured-wrong", **wrong)
    started = time.monotonic()
    with pytest.raises(NotAuthorized, match="refused the console's credentials"):
        replay_submit(actor=actor, cluster="secured-wrong", topic=source, partitions=None, start="earliest",
                      end="latest", sink="jsonl", reason="wrong password")
    assert time.monotonic() - started < 15
    assert not ReplayJob.objects.filter(cluster="secured-wrong").exists()
