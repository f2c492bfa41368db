"""The console's memory by kind (console/footprint.py), read from /proc: a supervised process is counted with its
children under its name, the answering process when nothing supervises it, and /health and /metrics carry it.
Real processes (keep_running and what it starts); the client processes and the JVM are covered where they are
started (tests/gateway/kafka/test_host_jvm.py, tests/gateway/kafka/test_sandbox.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from console import footprint
from console.paths import PROJECT_DIR
from console.process_status import statuses_read


def test_rss_is_read_from_proc_and_a_gone_process_has_none():
    assert footprint.rss_bytes(os.getpid()) > 10 * 1024 * 1024
    finished = subprocess.Popen(["true"])
    finished.wait()
    assert footprint.rss_bytes(finished.pid) is None
    assert footprint.pss_bytes(finished.pid) is None


def test_pss_counts_a_share_of_pages_two_processes_map():
    """A forked child shares its parent's pages: each one's PSS is below its RSS, and both together pay at most
    their RSS sum."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        deadline = time.monotonic() + 10
        while (footprint.rss_bytes(child.pid) or 0) < 5 * 1024 * 1024 and time.monotonic() < deadline:
            time.sleep(0.1)
        mine, theirs = footprint.pss_bytes(os.getpid()), footprint.pss_bytes(child.pid)
        assert 0 < theirs < footprint.rss_bytes(child.pid)  # the interpreter's libraries are shared with this one
        assert mine < footprint.rss_bytes(os.getpid())
    finally:
        child.kill()
        child.wait()


@pytest.fixture
def supervised_web(tmp_path, settings):
    """A `web` under keep_running, as make run starts it, whose command has a child of its own (like gunicorn's
    workers)."""
    settings.PROCESS_STATUS_DIR = str(tmp_path)
    # No client process nor Java JVM listens in a folder of the test's own (the session's has the earlier tests').
    settings.KAFKA_CLIENT_SOCKET_DIR = str(tmp_path / "clients")
    env = {**os.environ, "PROCESS_STATUS_DIR": str(tmp_path)}
    supervisor = subprocess.Popen([sys.executable, "-m", "devstack.keep_running", "web", "--", "sh", "-c",
                                   "sleep 60 & wait"], cwd=PROJECT_DIR, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        status = statuses_read(tmp_path).get("web")
        if status is not None and status.pid and footprint._children_by_parent().get(status.pid):
            break
        time.sleep(0.1)
    yield statuses_read(tmp_path)["web"]
    os.killpg(supervisor.pid, 15)
    supervisor.wait(20)


def test_a_supervised_process_is_counted_with_its_children(supervised_web):
    kinds = footprint.console_memory()
    command = supervised_web.pid
    child = footprint._children_by_parent()[command][0]
    assert kinds["web"].processes == 2
    assert kinds["web"].rss_bytes >= footprint.rss_bytes(command) + footprint.rss_bytes(child) - 1024 * 1024
    assert kinds["this_process"].processes == 1  # not supervised: reported as itself
    assert "client" not in kinds and "jvm" not in kinds  # none in this test's socket folder


def test_the_report_adds_the_kinds_up(supervised_web):
    report = footprint.memory_report()
    assert set(report["kinds"]) >= {"web", "this_process"}
    assert report["total_rss_bytes"] == sum(kind["rss_bytes"] for kind in report["kinds"].values())
    assert report["total_pss_bytes"] == sum(kind["pss_bytes"] for kind in report["kinds"].values())
    assert 0 < report["total_pss_bytes"] <= report["total_rss_bytes"]


def test_metrics_carry_each_kind(supervised_web):
    families = {family.name: family for family in footprint.footprint_metrics(None)}
    by_kind = {sample.labels["kind"]: sample.value
               for sample in families["kafka_console_process_memory_rss_bytes"].samples}
    processes = {sample.labels["kind"]: sample.value for sample in families["kafka_console_processes"].samples}
    assert by_kind["web"] > 0 and processes["web"] == 2
    shares = {sample.labels["kind"]: sample.value
              for sample in families["kafka_console_process_memory_pss_bytes"].samples}
    assert 0 < shares["web"] <= by_kind["web"]
