"""Faults around replays, with real processes killed: the Celery worker in the middle of a replay, the broker it
reads, and Redis down at submit. Each leaves the job ended with a reason, an audited outcome, nothing of it running
in the resident Spark driver, and a retry that works."""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.errors import ConsoleError
from sparkjobs.models import ReplayJob
from sparkjobs.services import replay_reap_orphans, replay_submit
from tests.fixtures.celery import WORKER_REPLAY_DIR, celery_env
from tests.fixtures.faults import kill_broker, retry_as_a_person_would, start_broker
from tests.sparkjobs.conftest import driver_runs, private_worker, wait_driver_done, wait_finished, wait_running

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def operator_actor(make_user, local_cluster):
    return Actor(user=make_user("faulty", "operator"), source="cli")


@pytest.fixture
def big_source(topic_factory, produce):
    """Large enough that the warm resident driver is still at work when the worker is killed."""
    topic = topic_factory("replay-fault", partitions=2)
    produce(topic, [(n % 2, None, b"x" * 50, None) for n in range(BIG)])
    return topic


BIG = 150_000  # seconds of work for the driver: the worker is killed a fraction of a second after it starts


def _submit(actor, topic, cluster="local"):
    return replay_submit(actor=actor, cluster=cluster, topic=topic, partitions=None, start="earliest", end="latest",
                         sink="jsonl", reason="fault test")


def test_a_replay_whose_worker_is_killed_is_failed_audited_and_its_driver_stopped(
        replay_env, redis_node, kafka_node, operator_actor, big_source, monkeypatch, settings, tmp_path):
    from sparkjobs import services
    from sparkjobs.tasks import run_replay

    with private_worker("doomed", celery_env(redis_node, kafka_node), tmp_path / "doomed-worker.log") as worker:
        # The session's worker consumes the default queue; this job goes to the one that will be killed.
        monkeypatch.setattr(services, "_enqueue", lambda job_id: run_replay.apply_async((job_id,), queue="doomed"))
        job = wait_running(_submit(operator_actor, big_source))
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    # The driver sees the worker's connection drop and cancels the replay's Spark jobs by itself.
    wait_driver_done(job.driver_pid, job.pk)

    settings.REPLAY_HEARTBEAT_TIMEOUT_S = 3
    settings.REPLAY_OUTPUT_DIR = str(WORKER_REPLAY_DIR)  # the reaper runs where the workers do, with their folder
    time.sleep(4)
    assert replay_reap_orphans() == [job.pk]
    assert replay_reap_orphans() == []  # reaped once

    job.refresh_from_db()
    assert job.state == ReplayJob.State.FAILED and job.finished_at is not None
    assert job.error.startswith("The worker running this replay stopped reporting"), job.error
    assert "Its Spark job was stopped." in job.error, job.error
    events = AuditEvent.objects.filter(correlation_id=job.correlation_id).order_by("seq")
    assert [(e.action, e.outcome) for e in events] == [("replay.run", "intent"), ("replay.run", "failure")]
    assert events.last().error == job.error

    monkeypatch.undo()
    settings.REPLAY_OUTPUT_DIR = str(replay_env)
    retry = wait_finished(_submit(operator_actor, big_source))
    assert retry.state == ReplayJob.State.SUCCEEDED and retry.records_written == BIG, retry.error


def test_redis_down_at_submit_fails_the_job_at_once_and_a_retry_works(replay_env, redis_node, operator_actor,
                                                                      big_source):
    redis_node.stop()
    try:
        started = time.monotonic()
        with pytest.raises(ConsoleError, match="could not be queued: the task queue \\(Redis\\) did not answer"):
            _submit(operator_actor, big_source)
        assert time.monotonic() - started < 15
    finally:
        redis_node.start()
    job = ReplayJob.objects.order_by("-pk").first()
    assert job.state == ReplayJob.State.FAILED and job.finished_at is not None
    events = AuditEvent.objects.filter(correlation_id=job.correlation_id).order_by("seq")
    assert [(e.action, e.outcome) for e in events] == [("replay.run", "intent"), ("replay.run", "failure")]

    retry = wait_finished(_submit(operator_actor, big_source), timeout=240)
    assert retry.state == ReplayJob.State.SUCCEEDED, retry.error


def test_a_replay_whose_broker_is_killed_fails_soon_with_the_reason_and_a_retry_works(
        replay_env, redis_node, kafka_node, fragile, operator_actor, monkeypatch, tmp_path):
    from confluent_kafka import Producer

    from console.clusters.selectors import cluster_admin
    from sparkjobs import services
    from sparkjobs.tasks import run_replay

    topic = f"replay-broker-fault-{uuid.uuid4().hex[:8]}"
    cluster_admin("fragile").create_topic(topic, partitions=2, replication_factor=1, configs={})
    producer = Producer({"bootstrap.servers": fragile.bootstrap, "linger.ms": 5})
    for n in range(400):
        producer.produce(topic, value=b"y" * 50, partition=n % 2)
    assert producer.flush(15) == 0
    del producer  # else it reconnects (and logs) all the while the broker is dead

    # A worker that gives an unanswering broker 6 s per request or poll instead of the 30 s default.
    env = {**celery_env(redis_node, kafka_node), "REPLAY_KAFKA_TIMEOUT_S": "6"}
    with private_worker("brokerfault", env, tmp_path / "worker.log"):
        monkeypatch.setattr(services, "_enqueue",
                            lambda job_id: run_replay.apply_async((job_id,), queue="brokerfault"))
        job = wait_running(_submit(operator_actor, topic, cluster="fragile"))
        kill_broker(fragile)
        killed = time.monotonic()
        job = wait_finished(job, timeout=150)
        ended_after = time.monotonic() - killed

        assert job.state == ReplayJob.State.FAILED, job.error
        assert job.error.startswith("Kafka did not answer in time (the broker may be down"), job.error
        assert ended_after < 120, f"the replay took {ended_after:.0f} s to give up on a dead broker"
        assert not driver_runs(job.driver_pid, job.pk)
        events = AuditEvent.objects.filter(correlation_id=job.correlation_id).order_by("seq")
        assert [(e.action, e.outcome) for e in events] == [("replay.run", "intent"), ("replay.run", "failure")]
        assert events.last().error == job.error and events.last().after["written"] is None

        start_broker(fragile)
        retry = wait_finished(retry_as_a_person_would(lambda: _submit(operator_actor, topic, cluster="fragile")))
    assert retry.state == ReplayJob.State.SUCCEEDED and retry.records_written == 400, retry.error
    assert sum(1 for part in Path(retry.output_dir).glob("part-*") for _ in part.open()) == 400
