"""Replays of transactional topics on the real broker: aborted records are never replayed unless asked for, the
gaps in the range are told apart, and the topic sink stays exactly once for read_committed readers when a task
dies mid-write and Spark retries it."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from sparkjobs.models import ReplayJob
from tests.fixtures.celery import celery_env
from tests.fixtures.kafka import begin_transaction
from tests.sparkjobs.conftest import private_worker, wait_finished

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.django_db(transaction=True)]

COMMITTED = [f"first-{i}" for i in range(40)] + [f"second-{i}" for i in range(40)]


@pytest.fixture
def transactional_source(topic_factory, kafka_node):
    """40 committed records, a transaction of 30 that was aborted, 40 more committed: 113 offsets in all, three of
    them transaction markers."""
    from confluent_kafka import Producer

    topic = topic_factory("tx-source", partitions=1)
    producer = Producer({"bootstrap.servers": kafka_node.bootstrap, "transactional.id": f"test-{uuid.uuid4().hex}"})
    producer.init_transactions(15)
    for values, commit in ((COMMITTED[:40], True), ([f"aborted-{i}" for i in range(30)], False),
                           (COMMITTED[40:], True)):
        producer.begin_transaction()
        for value in values:
            producer.produce(topic, value=value.encode(), partition=0)
        producer.flush(15)  # the aborted records are in the log, not only in the client
        producer.commit_transaction(15) if commit else producer.abort_transaction(15)
    return topic


def read_all(kafka_node, topic: str, isolation: str) -> list[str]:
    """Every value of `topic` as a consumer with `isolation` sees it, up to the end of each partition."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer({"bootstrap.servers": kafka_node.bootstrap, "group.id": f"check-{uuid.uuid4().hex}",
                         "isolation.level": isolation, "enable.partition.eof": True, "enable.auto.commit": False})
    try:
        partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        values, ended = [], set()
        while len(ended) < len(partitions):
            message = consumer.poll(10)
            assert message is not None, f"{topic} was not read to its end within 10 s"
            if message.error() and message.error().code() == KafkaError._PARTITION_EOF:
                ended.add(message.partition())
            elif message.error():
                raise AssertionError(message.error())
            else:
                values.append(message.value().decode())
        return values
    finally:
        consumer.close()


@pytest.fixture
def operator_actor(make_user, local_cluster):
    return Actor(user=make_user("txreplayer", "operator"), source="cli")


@pytest.mark.slow  # a drill: a private worker, a Python worker killed mid-write, a retried task
def test_a_topic_replay_gives_read_committed_readers_the_committed_records_once_when_a_task_dies_mid_write(
        replay_env, redis_node, kafka_node, transactional_source, topic_factory, operator_actor, make_user,
        monkeypatch, tmp_path):
    from sparkjobs import services
    from sparkjobs.tasks import run_replay

    make_user("txop", "operator")
    sink = topic_factory("tx-sink", partitions=1)
    # A worker whose first task attempt kills its Python worker after 25 records, with Spark allowed a retry.
    env = {**celery_env(redis_node, kafka_node), "REPLAY_FAULT_CRASH_AFTER": "25", "SPARK_MASTER": "local[2,2]"}
    with private_worker("txfault", env, tmp_path / "worker.log"):
        monkeypatch.setattr(services, "_enqueue", lambda job_id: run_replay.apply_async((job_id,), queue="txfault"))
        call_command("replay", "--topic", transactional_source, "--start", "earliest", "--end", "latest",
                     "--sink", f"topic:{sink}", "--actor", "txop", "--reason", "exactly once test")
        job = wait_finished(ReplayJob.objects.get(sink_topic=sink), timeout=240)

    assert job.state == ReplayJob.State.SUCCEEDED, job.error
    assert read_all(kafka_node, sink, "read_committed") == COMMITTED
    # The dead attempt's 25 records are in the log, aborted: the fault did strike mid-write.
    assert read_all(kafka_node, sink, "read_uncommitted") == COMMITTED[:25] + COMMITTED
    # Task failures are in the driver's own log, which the job's log names.
    driver_log = re.search(r"its own log: (\S+)\)", Path(job.log_path).read_text()).group(1)
    assert "Python worker exited unexpectedly" in Path(driver_log).read_text()
    assert (job.planned_records, job.records_read, job.records_aborted, job.transaction_markers) == (113, 80, 30, 3)
    assert job.offsets_summary == ("113 offsets in the range: 80 records read, 30 aborted (skipped), "
                                   "3 transaction markers")
    outcome = AuditEvent.objects.get(correlation_id=job.correlation_id, outcome="success")
    assert outcome.after["aborted"] == 30 and outcome.after["transaction_markers"] == 3
    from console.clusters.selectors import cluster_admin

    leftovers = [g.group_id for g in cluster_admin("local").list_groups() if g.group_id.startswith("console-replay-")]
    assert leftovers == [], "the tasks' marker groups outlived the job"


def test_read_uncommitted_is_asked_for_warned_about_and_replays_the_aborted_records(
        replay_env, transactional_source, operator_actor, make_user, capsys):
    make_user("forensic", "operator")
    call_command("replay", "--topic", transactional_source, "--start", "earliest", "--sink", "files:jsonl",
                 "--isolation", "read_uncommitted", "--wait", "--timeout", "180", "--actor", "forensic",
                 "--reason", "what did the aborted transaction hold")
    out, err = capsys.readouterr()
    assert "read_uncommitted replays records of aborted transactions" in err
    summary = json.loads(out.splitlines()[-1])
    assert summary["state"] == "succeeded" and summary["records"] == 110 and summary["isolation"] == "read_uncommitted"
    assert (summary["aborted"], summary["transaction_markers"]) == (None, 3)
    job = ReplayJob.objects.get(pk=summary["job"])
    values = [json.loads(line)["value"] for f in sorted(Path(job.output_dir).glob("part-*"))
              for line in f.read_text().splitlines()]
    assert sorted(values) == sorted(COMMITTED + [f"aborted-{i}" for i in range(30)])


def test_latest_under_read_committed_stops_at_an_open_transaction(replay_env, kafka_node, topic_factory,
                                                                   operator_actor):
    from confluent_kafka import Producer

    from sparkjobs.selectors import resolve_range
    from sparkjobs.services import replay_submit

    topic = topic_factory("tx-open", partitions=1)
    plain = Producer({"bootstrap.servers": kafka_node.bootstrap})
    for i in range(5):
        plain.produce(topic, value=f"before-{i}".encode(), partition=0)
    plain.flush(15)
    open_tx = begin_transaction(kafka_node.bootstrap, topic, [f"pending-{i}".encode() for i in range(7)])
    try:
        committed = replay_submit(actor=operator_actor, cluster="local", topic=topic, partitions=None,
                                  start="earliest", end="latest", sink="jsonl", reason="open transaction")
        assert committed.ranges == {"0": [0, 5]}  # the last stable offset, not the log end of 12
        # read_uncommitted's "latest" is the log end (how it reads is the CLI test's; the range is what differs).
        assert resolve_range("local", topic, None, "earliest", "latest",
                             isolation="read_uncommitted").ranges == {0: (0, 12)}
        committed = wait_finished(committed)
        assert committed.state == ReplayJob.State.SUCCEEDED, committed.error
        assert committed.records_read == 5
    finally:
        open_tx.abort_transaction(15)
