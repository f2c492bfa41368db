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


# Enough that the replay is still running when it is killed, a fraction of a second after it started (it takes
# seconds), and few enough that the retry on a new, cold driver is short.
RECORDS = 150_000


@pytest.mark.slow  # a drill: the driver killed mid-replay, then a new one started for the retry
def test_a_driver_killed_mid_replay_fails_the_job_saying_so_and_the_next_replay_gets_a_new_driver(
        replay_env, operator_actor, topic_factory, produce):
    topic = topic_factory("replay-driver-kill", partitions=2)
    produce(topic, [(n % 2, None, b"d" * 100, None) for n in range(RECORDS)])

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
    assert retry.state == ReplayJob.State.SUCCEEDED and retry.records_written == RECORDS, retry.error
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
    from tests.fixtures.celery import WORKER_REPLAY_DIR

    settings.REPLAY_OUTPUT_DIR = str(WORKER_REPLAY_DIR)
    deadline = time.monotonic() + 120
    while not runner.running_drivers():
        assert time.monotonic() < deadline, "the session's worker started no Spark driver"
        time.sleep(0.5)
    driver = runner.running_drivers()[0]
    # Its owner, whose going stops it, is the worker.
    assert Path(f"/proc/{driver.pid}/cmdline").read_bytes().split(b"\0")[-3] == str(celery_worker_process.pid).encode()


# The driver's bounds before the token (jobs/driver.py: REQUEST_DEADLINE_S = 5, REQUEST_MAX_BYTES = 64 KiB); the
# driver module imports its siblings as Spark ships them, so they are repeated here rather than imported.
REQUEST_DEADLINE_S = 5.0


@pytest.fixture(scope="module")
def socket_driver(tmp_path_factory):
    """A resident driver of this module's own (so its memory is not shared with replays), without the warm-up
    (which allocates while it runs: tests/sparkjobs/test_warm_up.py); stopped after."""
    from django.test import override_settings

    from sparkjobs import runner

    folder = tmp_path_factory.mktemp("driver-socket")
    with override_settings(REPLAY_OUTPUT_DIR=str(folder), REPLAY_DRIVER_IDLE_S=900, REPLAY_DRIVER_WARM_UP=False):
        driver = runner.ensure_driver()
    try:
        state = next((folder / "driver").glob("*.json"))
        assert driver.ask({"ping": True})["warming"] is False
        yield driver, state
    finally:
        runner._stop_group(driver.pid)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def _closed_after(connection: socket.socket, limit: float) -> float:
    """Seconds until the driver closes `connection` (reads nothing from it); fails after `limit`."""
    started = time.monotonic()
    connection.settimeout(limit)
    try:
        assert connection.recv(1) == b""
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def test_the_drivers_token_file_is_0600(socket_driver):
    _, state = socket_driver
    assert oct(state.stat().st_mode & 0o777) == "0o600"
    assert list(state.parent.glob(f".{state.name}.*")) == []  # no temporary left beside it


def test_the_drivers_spark_rpc_takes_no_client_without_sparks_secret(socket_driver, spark_rpc_probe, spark_session):
    """Spark's RPC is Java serialization: a process of the host that reached it could send the driver objects to
    decode. The driver's port asks for Spark's secret, which never leaves its JVM in local mode; the same client
    reaches a Spark driver that does not authenticate (the tests' own reader)."""
    driver, state = socket_driver
    rpc = json.loads(state.read_text())["spark_rpc_port"]
    plain, why = spark_rpc_probe(rpc, "HeartbeatReceiver")
    assert not plain and "SaslMessage" in why, why  # the driver expected Spark's authentication first
    guessed, why = spark_rpc_probe(rpc, "HeartbeatReceiver", secret="a-guess")
    assert not guessed, why
    unauthenticated = int(spark_session.sparkContext.getConf().get("spark.driver.port"))
    assert spark_rpc_probe(unauthenticated, "HeartbeatReceiver") == (True, "")
    assert driver.ask({"ping": True}) is not None
    properties = state.with_suffix(".conf")
    assert oct(properties.stat().st_mode & 0o777) == "0o600"
    assert "spark.authenticate true" in properties.read_text()


def test_a_silent_connection_is_dropped_after_the_deadline(socket_driver):
    driver, _ = socket_driver
    with socket.create_connection(("127.0.0.1", driver.port), timeout=5) as silent:
        waited = _closed_after(silent, REQUEST_DEADLINE_S + 5)
    assert REQUEST_DEADLINE_S - 1 < waited < REQUEST_DEADLINE_S + 3


def test_endless_lines_are_cut_at_once_without_the_driver_growing(socket_driver):
    driver, state = socket_driver
    python = json.loads(state.read_text())["python_pid"]
    before = _rss_kib(python)
    errors = []

    def flood() -> None:
        with socket.create_connection(("127.0.0.1", driver.port), timeout=10) as connection:
            try:
                connection.sendall(b"x" * (10 << 20))  # 10 MiB, no newline
            except OSError as exc:  # the driver closed it part way: what should happen
                errors.append(exc)
                return
            errors.append(_closed_after(connection, REQUEST_DEADLINE_S + 5))

    import threading

    floods = [threading.Thread(target=flood) for _ in range(4)]
    started = time.monotonic()
    for thread in floods:
        thread.start()
    for thread in floods:
        thread.join(30)
    elapsed = time.monotonic() - started

    # Each was refused long before its 10 MiB went through, and well inside the silent-client deadline.
    assert len(errors) == 4 and all(isinstance(e, OSError) for e in errors), errors
    assert elapsed < REQUEST_DEADLINE_S
    grown = _rss_kib(python) - before
    assert grown < 8 * 1024, f"the driver's Python process grew by {grown} KiB for 40 MiB sent"
    assert driver.ask({"ping": True}) is not None


def test_a_wrong_token_is_closed_with_nothing_sent(socket_driver):
    driver, _ = socket_driver
    for request in (b'{"ping": true, "token": "guess"}\n', b'["not", "an", "object"]\n', b"not json\n"):
        with socket.create_connection(("127.0.0.1", driver.port), timeout=5) as stranger:
            stranger.sendall(request)
            assert _closed_after(stranger, 3) < 2


def test_a_client_with_the_token_is_served_while_silent_and_flooding_ones_hang_on(socket_driver):
    driver, _ = socket_driver
    silent = [socket.create_connection(("127.0.0.1", driver.port), timeout=10) for _ in range(8)]
    flooding = socket.create_connection(("127.0.0.1", driver.port), timeout=10)
    try:
        flooding.sendall(b"y" * 60_000)  # under the bound, no newline: the driver is still reading it
        started = time.monotonic()
        answer = driver.ask({"ping": True}, timeout=3)
        assert answer is not None and answer["jobs"] == [] and time.monotonic() - started < 2
    finally:
        for connection in [*silent, flooding]:
            connection.close()
