"""Faults around replays, with real processes killed: the Celery worker in the middle of a replay, and Redis down
at submit. Each leaves the job ended with a reason, an audited outcome, no Spark driver running, and a retry
that works."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.devstack.paths import PROJECT_DIR
from console.errors import ConsoleError
from sparkjobs.models import ReplayJob
from sparkjobs.services import replay_reap_orphans, replay_submit
from tests.conftest import celery_env
from tests.sparkjobs.conftest import wait_finished

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def operator_actor(make_user, local_cluster):
    return Actor(user=make_user("faulty", "operator"), source="cli")


@pytest.fixture
def big_source(topic_factory, produce):
    topic = topic_factory("replay-fault", partitions=2)
    produce(topic, [(p, None, b"x" * 50, None) for p in (0, 1) for _ in range(200)])
    return topic


def _submit(actor, topic):
    return replay_submit(actor=actor, cluster="local", topic=topic, partitions=None, start="earliest", end="latest",
                         sink="jsonl", reason="fault test")


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


def test_a_replay_whose_worker_is_killed_is_failed_audited_and_its_driver_stopped(
        replay_env, redis_node, kafka_node, operator_actor, big_source, monkeypatch, settings, tmp_path):
    from console.celery import app
    from sparkjobs import services
    from sparkjobs.tasks import run_replay

    log = open(tmp_path / "doomed-worker.log", "w")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "console", "worker", "--pool=solo", "-Q", "doomed",
         f"--hostname=doomed-{os.getpid()}@%h"], cwd=PROJECT_DIR, env=celery_env(redis_node, kafka_node),
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while not any(f"doomed-{os.getpid()}" in name for reply in (app.control.ping(timeout=0.5) or [])
                  for name in reply):
        assert time.monotonic() < deadline and worker.poll() is None, "the worker to be killed did not start"
    # The session's worker consumes the default queue; this job goes to the one that will be killed.
    monkeypatch.setattr(services, "_enqueue", lambda job_id: run_replay.apply_async((job_id,), queue="doomed"))

    job = _submit(operator_actor, big_source)
    deadline = time.monotonic() + 90
    while not (job.state == ReplayJob.State.RUNNING and job.driver_pid):
        assert time.monotonic() < deadline, f"replay #{job.pk} never started: {job.state}"
        time.sleep(0.2)
        job.refresh_from_db()
    worker.send_signal(signal.SIGKILL)
    worker.wait(10)
    log.close()
    assert _alive(job.driver_pid)  # the driver outlives the worker that watched it

    settings.REPLAY_HEARTBEAT_TIMEOUT_S = 3
    time.sleep(4)
    assert replay_reap_orphans() == [job.pk]
    assert replay_reap_orphans() == []  # reaped once

    job.refresh_from_db()
    assert job.state == ReplayJob.State.FAILED and job.finished_at is not None
    assert job.error.startswith("The worker running this replay stopped reporting") and "driver was stopped" in job.error
    deadline = time.monotonic() + 20
    while _alive(job.driver_pid):
        assert time.monotonic() < deadline, "the orphaned Spark driver is still running"
        time.sleep(0.2)
    events = AuditEvent.objects.filter(correlation_id=job.correlation_id).order_by("seq")
    assert [(e.action, e.outcome) for e in events] == [("replay.run", "intent"), ("replay.run", "failure")]
    assert events.last().error == job.error

    monkeypatch.undo()
    retry = wait_finished(_submit(operator_actor, big_source))
    assert retry.state == ReplayJob.State.SUCCEEDED and retry.records_written == 400, retry.error


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
