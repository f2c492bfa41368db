"""keep_running's status files and the error line it keeps from a dead process's output (no processes started)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from devstack.keep_running import Policy
from console.process_status import (FAILED, RETRYING, RUNNING, STARTING, STOPPED, ProcessStatus, pick_error,
                                             status_read, status_write, statuses_read)

JAVA_TRACE = """\
[2026-01-01 10:00:00,000] INFO Loading logs from log dirs ArrayBuffer(/data) (kafka.log.LogManager)
[2026-01-01 10:00:09,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)
java.nio.file.FileSystemException: /data/orders-17/00000000000000000000.timeindex: Too many open files
\tat java.base/sun.nio.fs.UnixException.translateToIOException(UnixException.java:100)
\tat org.apache.kafka.storage.internals.log.LogSegment.open(LogSegment.java:200)
\t... 12 more
[2026-01-01 10:00:09,100] INFO shutting down (kafka.server.KafkaRaftServer)
"""

PYTHON_TRACE = """\
Traceback (most recent call last):
  File "/app/manage.py", line 22, in <module>
    main()
redis.exceptions.AuthenticationError: invalid username-password pair or user is disabled.
"""


def test_the_error_line_is_the_exception_not_its_stack_frames_or_the_shutdown_after_it():
    assert pick_error(JAVA_TRACE.splitlines()) == (
        "java.nio.file.FileSystemException: /data/orders-17/00000000000000000000.timeindex: Too many open files")


def test_a_python_traceback_gives_its_exception_line():
    assert pick_error(PYTHON_TRACE.splitlines()) == (
        "redis.exceptions.AuthenticationError: invalid username-password pair or user is disabled.")


def test_without_an_error_looking_line_the_last_words_are_kept_and_nothing_gives_nothing():
    assert pick_error(["starting", "  listening on 8085", "", "  "]) == "listening on 8085"
    assert pick_error([]) == "" and pick_error(["", "\t... 3 more"]) == ""


def test_a_very_long_line_is_clipped():
    assert len(pick_error(["Error: " + "x" * 10_000])) == 400


def test_the_backoff_grows_and_stays_at_its_longest():
    policy = Policy(backoff_s=(1, 2, 5))
    assert [policy.delay(n) for n in (0, 1, 2, 3, 9)] == [1, 1, 2, 5, 5]


def test_a_status_file_is_owner_only_and_read_back_whole(tmp_path):
    status = ProcessStatus(name="kafka", state=FAILED, supervisor_pid=os.getpid(), failures=5,
                           last_exit="exit code 1", last_error="Too many open files", output_tail=["a", "b"])
    status_write(status, tmp_path)

    assert stat.S_IMODE((tmp_path / "kafka.json").stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["kafka.json"]  # no staging file left behind
    # This test process is not keep_running: its status reads as that of a supervisor that is gone.
    assert status_read("kafka", tmp_path).state == STOPPED


def test_a_status_whose_supervisor_is_gone_reads_as_stopped_and_is_not_failing(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    status_write(ProcessStatus(name="redis", state=RETRYING, supervisor_pid=gone.pid, failures=2), tmp_path)

    read = status_read("redis", tmp_path)
    assert read.state == STOPPED and not read.failing and read.failures == 2


@pytest.mark.parametrize(("state", "failures", "failing"), [
    (STARTING, 0, False), (STARTING, 3, True), (RUNNING, 0, False), (RETRYING, 1, True), (FAILED, 5, True),
    (STOPPED, 5, False)])
def test_which_states_count_as_failing(state, failures, failing):
    assert ProcessStatus(name="x", state=state, supervisor_pid=1, failures=failures).failing is failing


def test_unreadable_or_foreign_files_are_skipped_and_names_are_checked(tmp_path):
    (tmp_path / "half.json").write_text('{"name": "half", "sta')
    (tmp_path / "other.json").write_text('{"unexpected": 1}')
    assert statuses_read(tmp_path) == {} and status_read("absent", tmp_path) is None
    with pytest.raises(ValueError):
        status_read("../etc/passwd", tmp_path)
