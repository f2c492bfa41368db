"""The dev stack's one way of starting a server: what a wait says when the server dies or never answers."""

from __future__ import annotations

import subprocess
import sys

import pytest

from devstack.launcher import Watched, java_command, start_logged, stop_process, wait_until_ready


def test_a_server_that_dies_is_reported_at_once_with_the_end_of_its_log(tmp_path):
    log = tmp_path / "server.log"
    process = start_logged([sys.executable, "-c", "print('line one'); print('Address already in use'); exit(3)"],
                           log)
    process.wait(10)

    with pytest.raises(RuntimeError) as error:
        wait_until_ready(lambda: False, what="the server", watch=[Watched("the server", process, log)], timeout=30)

    assert "the server exited with code 3" in str(error.value)
    assert str(error.value).endswith("line one\nAddress already in use")


def test_a_server_that_never_answers_times_out_and_stops(tmp_path):
    log = tmp_path / "server.log"
    process = start_logged([sys.executable, "-c", "print('starting', flush=True); import time; time.sleep(60)"], log)
    try:
        with pytest.raises(TimeoutError) as error:
            wait_until_ready(lambda: False, what="the server on port 1", timeout=0.5,
                             watch=[Watched("the server", process, log)])
        assert str(error.value).startswith("the server on port 1 did not answer within 0 s; see ")
    finally:
        stop_process(process, timeout=5)
    assert process.returncode is not None


def test_a_server_that_ignores_sigterm_is_killed(tmp_path):
    process = start_logged([sys.executable, "-c", "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                            "print('up', flush=True)\ntime.sleep(60)"], subprocess.PIPE)
    assert process.stdout.readline() == b"up\n"
    stop_process(process, timeout=0.5)
    assert process.returncode == -9


def test_java_commands_run_a_class_on_a_classpath_or_an_executable_jar(tmp_path):
    assert java_command("a.Main", "x", 1, heap=("-Xmx64m",), options=("-Dk=v",), classpath=f"{tmp_path}/*") == [
        "java", "-Xmx64m", "-Dk=v", "-cp", f"{tmp_path}/*", "a.Main", "x", "1"]
    jar = tmp_path / "app.jar"
    assert java_command(jar, heap=("-Xmx64m",)) == ["java", "-Xmx64m", "-jar", str(jar)]
