"""Stopping a driver's process group: quick once it has exited, even while it waits to be reaped."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from sparkjobs import runner


def _child(*command: str) -> subprocess.Popen:
    return subprocess.Popen(list(command), start_new_session=True, stdin=subprocess.DEVNULL)


def test_a_child_that_exited_counts_as_ended_and_is_reaped():
    child = _child("true")
    deadline = time.monotonic() + 10
    while "zombie" not in Path(f"/proc/{child.pid}/status").read_text().lower():
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.05)

    assert runner._ended(child.pid)
    assert not Path(f"/proc/{child.pid}").exists()  # reaped, not left a zombie


def test_a_running_child_has_not_ended():
    child = _child("sleep", "30")
    try:
        assert not runner._ended(child.pid)
    finally:
        child.kill()
        child.wait()


def test_stopping_a_child_group_that_obeys_sigterm_takes_no_grace_period():
    # It used to wait out its 15 s grace period for a driver this process had started: the exited driver stayed a
    # zombie, whose /proc entry looked like a running process.
    child = _child("sleep", "30")
    started = time.monotonic()

    runner._stop_group(child.pid)

    assert time.monotonic() - started < 5
    assert not Path(f"/proc/{child.pid}").exists()
