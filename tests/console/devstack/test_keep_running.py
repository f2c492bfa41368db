"""`make run` under honcho: a process that dies is started again with a line in the log, and the others go on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from console.devstack.paths import PROJECT_DIR

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
        f"steady: {python} -m console.devstack.keep_running steady -- {python} -c 'import time; time.sleep(600)'\n"
        f"flaky: {python} -m console.devstack.keep_running flaky -- {python} {tmp_path / 'flaky.py'} {marker}\n")
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
