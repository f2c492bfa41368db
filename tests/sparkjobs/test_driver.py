"""The resident Spark driver's own life: killed in the middle of a replay, and stopping by itself when idle."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from sparkjobs.models import ReplayJob
from sparkjobs.services import replay_submit
from tests.sparkjobs.conftest import wait_finished, wait_running

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def operator_actor(make_user, local_cluster):
    return Actor(user=make_user("driverop", "operator"), source="cli")


def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text().lower()


@pytest.mark.slow  # a drill: the driver killed mid-replay, then a new one started for the retry
def test_a_driver_killed_mid_replay_fails_the_job_saying_so_and_the_next_replay_gets_a_new_driver(
        replay_env, operator_actor, topic_factory, produce):
    topic = topic_factory("replay-driver-kill", partitions=2)
    produce(topic, [(n % 2, None, b"d" * 100, None) for n in range(400_000)])

    def submit():
        return replay_submit(actor=operator_actor, cluster="local", topic=topic, partitions=None, start="earliest",
                             end="latest", sink="jsonl", reason="driver kill drill")

    job = wait_running(submit())
    os.killpg(job.driver_pid, signal.SIGKILL)
    job = wait_finished(job, timeout=60)

    assert job.state == ReplayJob.State.FAILED
    assert job.error.startswith("The Spark driver stopped during the replay."), job.error
    events = AuditEvent.objects.filter(correlation_id=job.correlation_id).order_by("seq")
    assert [(e.action, e.outcome) for e in events] == [("replay.run", "intent"), ("replay.run", "failure")]

    retry = wait_finished(submit(), timeout=180)
    assert retry.state == ReplayJob.State.SUCCEEDED and retry.records_written == 400_000, retry.error
    assert retry.driver_pid != job.driver_pid and not _alive(job.driver_pid)


def test_an_idle_driver_stops_by_itself_and_leaves_no_state(settings, tmp_path):
    from sparkjobs import runner

    settings.REPLAY_OUTPUT_DIR = str(tmp_path)
    settings.REPLAY_DRIVER_IDLE_S = 6
    driver = runner.ensure_driver()
    assert runner.ensure_driver() == driver  # found, not started again
    state = next((tmp_path / "driver").glob("*.json"))
    assert json.loads(state.read_text())["pid"] == driver.pid and oct(state.stat().st_mode & 0o777) == "0o600"
    assert driver.ask({"ping": True})["jobs"] == []
    with socket.create_connection(("127.0.0.1", driver.port), timeout=5) as stranger:
        stranger.sendall(b'{"ping": true, "token": "guess"}\n')
        assert stranger.makefile("rb").readline() == b""  # a wrong token gets nothing back

    deadline = time.monotonic() + 60
    while _alive(driver.pid):
        assert time.monotonic() < deadline, "the idle driver is still running"
        time.sleep(0.5)
    assert not state.exists() and runner.running_drivers() == []


def test_a_worker_starts_its_driver_as_it_comes_up(celery_worker_process, settings):
    from sparkjobs import runner
    from tests.conftest import WORKER_REPLAY_DIR

    settings.REPLAY_OUTPUT_DIR = str(WORKER_REPLAY_DIR)
    deadline = time.monotonic() + 120
    while not runner.running_drivers():
        assert time.monotonic() < deadline, "the session's worker started no Spark driver"
        time.sleep(0.5)
    driver = runner.running_drivers()[0]
    # Its owner, whose going stops it, is the worker.
    assert Path(f"/proc/{driver.pid}/cmdline").read_bytes().split(b"\0")[-3] == str(celery_worker_process.pid).encode()
