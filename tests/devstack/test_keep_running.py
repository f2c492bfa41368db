"""`make run` under honcho: a process that dies is started again with a line in the log, and the others go on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from unittest.mock import ANY

from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from console.paths import PROJECT_DIR
from console.process_status import FAILED, RUNNING, STARTING, STOPPED, ProcessStatus, status_read

FLAKY = """
import os, sys, time
marker = sys.argv[1]
starts = int(open(marker).read()) if os.path.exists(marker) else 0
open(marker, "w").write(str(starts + 1))
if starts == 0:
    os.abort()  # what a native assertion in a client library does
time.sleep(600)
"""


def test_a_dead_process_is_restarted_and_the_rest_of_the_stack_keeps_running(tmp_path: Path):
    python = sys.executable
    (tmp_path / "flaky.py").write_text(FLAKY)
    marker = tmp_path / "starts"
    (tmp_path / "Procfile").write_text(
        f"steady: {python} -m devstack.keep_running steady -- {python} -c 'import time; time.sleep(600)'\n"
        f"flaky: {python} -m devstack.keep_running flaky -- {python} {tmp_path / 'flaky.py'} {marker}\n")
    honcho = str(Path(python).parent / "honcho")
    log_path = tmp_path / "honcho.log"
    with open(log_path, "w") as log:
        stack = subprocess.Popen([honcho, "-f", str(tmp_path / "Procfile"), "-d", str(PROJECT_DIR), "start"],
                                 cwd=PROJECT_DIR, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                 env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + 30
        while not (marker.exists() and marker.read_text() == "2"):
            assert stack.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        time.sleep(1)
        assert stack.poll() is None, log_path.read_text()
        output = log_path.read_text()
        assert "[keep_running] flaky stopped (signal SIGABRT)" in output
        assert "starting it again in 1 s" in output
    finally:
        os.killpg(stack.pid, signal.SIGTERM)
        stack.wait(30)
    assert "steady stopped" not in log_path.read_text()


# Fails with a broker's last words until the file named by its second argument exists, then runs.
FAILING_UNTIL_FIXED = """
import os, sys, time
marker, fixed = sys.argv[1], sys.argv[2]
starts = int(open(marker).read()) if os.path.exists(marker) else 0
open(marker, "w").write(str(starts + 1))
if not os.path.exists(fixed):
    print("[2026-01-01 10:00:00,000] INFO Loading logs from log dirs (kafka.log.LogManager)", flush=True)
    print("[2026-01-01 10:00:01,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)")
    print("java.nio.file.FileSystemException: /data/orders-17/00000000000000000000.index: Too many open files")
    print("\\tat java.base/sun.nio.fs.UnixException.translateToIOException(UnixException.java:100)", file=sys.stderr)
    sys.exit(1)
print("started", flush=True)
time.sleep(600)
"""
TOO_MANY = "java.nio.file.FileSystemException: /data/orders-17/00000000000000000000.index: Too many open files"


def start_supervised(tmp_path: Path, name: str, *options: str) -> tuple[subprocess.Popen, Path, Path, Path]:
    """keep_running over FAILING_UNTIL_FIXED, its status files in tmp_path/status."""
    (tmp_path / "failing.py").write_text(FAILING_UNTIL_FIXED)
    marker, fixed, status_dir = tmp_path / "starts", tmp_path / "fixed", tmp_path / "status"
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "devstack.keep_running", name, *options, "--",
         sys.executable, str(tmp_path / "failing.py"), str(marker), str(fixed)],
        cwd=PROJECT_DIR, stdout=open(tmp_path / "out.log", "wb"), stderr=subprocess.STDOUT,
        env={**os.environ, "PROCESS_STATUS_DIR": str(status_dir), "PYTHONUNBUFFERED": "1"})
    return supervisor, marker, fixed, status_dir


def wait_for_state(name: str, status_dir: Path, state: str, timeout: float = 30) -> ProcessStatus:
    deadline = time.monotonic() + timeout
    while True:
        status = status_read(name, status_dir)
        if status is not None and status.state == state:
            return status
        assert time.monotonic() < deadline, f"{name} never {state}: {status}"
        time.sleep(0.1)


def stop_supervisor(supervisor: subprocess.Popen) -> None:
    if supervisor.poll() is None:
        supervisor.send_signal(signal.SIGTERM)
        supervisor.wait(30)


def test_a_command_that_keeps_failing_is_given_up_with_its_last_error_and_a_good_start_clears_it(tmp_path: Path):
    supervisor, marker, fixed, status_dir = start_supervised(
        tmp_path, "broker", "--give-up-after", "3", "--within", "60", "--healthy-after", "2")
    try:
        failed = wait_for_state("broker", status_dir, FAILED)
        assert failed.failing and failed.failures == 3 and failed.last_exit == "exit code 1"
        assert failed.last_error == TOO_MANY
        assert failed.output_tail[-1].startswith("\tat java.base") and failed.pid is None
        time.sleep(2.5)  # longer than any backoff: nothing starts it again, and the supervisor stays for honcho
        assert marker.read_text() == "3" and supervisor.poll() is None
        output = (tmp_path / "out.log").read_text()
        assert "Too many open files" in output  # the command's own output still passes through
        assert "3 failures within 60 s, so it is not started again" in output

        fixed.touch()
        retry = subprocess.run([sys.executable, "-m", "console.process_status", "retry", "broker"],
                               cwd=PROJECT_DIR, capture_output=True, text=True,
                               env={**os.environ, "PROCESS_STATUS_DIR": str(status_dir)})
        assert retry.returncode == 0, retry.stderr
        starting = wait_for_state("broker", status_dir, STARTING)
        assert starting.failing  # not cleared until it has lived --healthy-after seconds
        running = wait_for_state("broker", status_dir, RUNNING)
        assert not running.failing and running.failures == 0 and running.last_error == "" and running.pid
    finally:
        stop_supervisor(supervisor)
    assert status_read("broker", status_dir).state == STOPPED


def test_a_failing_local_broker_is_named_with_its_error_on_health_and_the_cluster_pages(
        tmp_path: Path, client_for, viewer, redis_node, settings):
    from console.clusters.local_processes import MSG_GAVE_UP, MSG_LOCAL_BROKER_FAILED
    from console.clusters.models import Cluster
    from devstack.kafka import free_port

    settings.PROCESS_STATUS_DIR = str(tmp_path / "status")
    settings.KAFKA_REQUEST_TIMEOUT_S = 1.0
    Cluster.objects.update_or_create(name=settings.KAFKA_LOCAL_CLUSTER_NAME,
                                     defaults={"bootstrap_servers": f"127.0.0.1:{free_port()}"})
    supervisor, _marker, fixed, status_dir = start_supervised(
        tmp_path, "kafka", "--give-up-after", "2", "--within", "60", "--healthy-after", "1")
    person = client_for(viewer)
    try:
        wait_for_state("kafka", status_dir, FAILED)
        expected = MSG_LOCAL_BROKER_FAILED.format(error=TOO_MANY) + MSG_GAVE_UP.format(failures=2)

        details = person.get("/health").json()
        assert details["kafka"]["local"]["reachable"] is False and details["kafka"]["local"]["error"] == expected
        assert details["processes"]["kafka"]["state"] == FAILED
        assert details["processes"]["kafka"]["ok"] is False
        assert details["processes"]["kafka"]["last_error"] == TOO_MANY
        anonymous = Client().get("/health")
        assert anonymous.json()["processes"] == {"supervised": 1, "failing": 1}
        assert anonymous.json()["kafka"] == {"clusters": 1, "unreachable": 1}
        assert "Too many open files" not in anonymous.content.decode()

        detail = reverse("clusters:detail", args=[settings.KAFKA_LOCAL_CLUSTER_NAME])
        page = person.get(detail)
        assert page.status_code == 503 and escape(expected) in page.content.decode()
        assert escape(expected) in person.get(reverse("clusters:list")).content.decode()

        fixed.touch()
        os.kill(supervisor.pid, signal.SIGUSR1)
        wait_for_state("kafka", status_dir, RUNNING)
        details = person.get("/health").json()
        assert details["processes"]["kafka"] == {"ok": True, "state": RUNNING, "since": ANY, "failures": 0,
                                                 "last_exit": None, "last_error": None, "output_tail": []}
        # The process runs but answers no Kafka requests: the page says only that the cluster did not answer.
        page = person.get(detail).content.decode()
        assert "failed to start" not in page and "Too many open files" not in page
    finally:
        stop_supervisor(supervisor)
