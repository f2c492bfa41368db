"""Every bench script runs, in a subprocess, with --smoke: its own code path at a tiny size, its checks holding
(the counts it compares agree), bench/RESULTS.md left as it was. The scripts are found by listing bench/, so a new
one without a smoke mode fails here. The benches that start one broker of their own share one started here
instead (bench/common.py:bench_stack takes KAFKA_BOOTSTRAP_SERVERS); the others start what they need."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench.common import SMOKE_PASSED
from tests.bench.scripts import BENCH, ROOT, bench_scripts

# slow: CI's PostgreSQL pass leaves it out, so it runs once; kafka and spark: it starts brokers and a Spark driver, so
# the unit tests' selection (not kafka and not spark and not browser), run without the suite lock, leaves it out too.
pytestmark = [pytest.mark.slow, pytest.mark.kafka, pytest.mark.spark]
# About ten minutes of scripts in all, independent of each other: make test's two sessions take half each (each with
# a shared broker of its own) rather than one session all of it (tests/conftest.py).
SESSION_GROUPS = 2

LEFT_RUNNING_GRACE_S = 15.0
SMOKE_TIMEOUT_S = 600  # the slowest (bench/scale.py: three brokers, PostgreSQL, gunicorn, Celery) takes minutes
# What a developer's shell gives a bench: nothing of this session's own servers and folders (its Redis stand-in,
# client sockets, settings module), which would otherwise reach the benches through the environment.
PASSED_ON = {"PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TMPDIR", "TZ", "JAVA_HOME", "SHELL"}


@pytest.fixture(scope="module")
def shared_broker(tmp_path_factory):
    from devstack.kafka import KafkaNode, free_ports

    home = tmp_path_factory.mktemp("bench-broker")
    port, controller = free_ports(2)
    node = KafkaNode(home=home, port=port, controller_port=controller, heap=("-Xms512m", "-Xmx1g"))
    with open(home / "broker.log", "w") as log:
        node.start(stdout=log)
        try:
            node.wait_ready()
        except Exception:
            node.stop(kill=True)
            raise
    yield node
    node.stop(kill=True)


def run_smoke(script: Path, env: dict[str, str], output: Path) -> tuple[int, float]:
    """(exit code, seconds). On a timeout the bench gets SIGINT first, so its `finally` blocks stop the servers it
    started; then its process group is killed."""
    started = time.monotonic()
    with open(output, "w") as out:
        process = subprocess.Popen([sys.executable, str(script), "--smoke"], cwd=ROOT, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = process.wait(SMOKE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            code = -1
    return code, time.monotonic() - started


def _named_processes(folder: Path) -> dict[int, str]:
    """This user's processes that name `folder` in their environment, command line, working directory or open
    files, by pid with their command line (zombies left out)."""
    marker, found = os.fsencode(str(folder)), {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if entry.stat().st_uid != os.getuid() or "\nState:\tZ" in (entry / "status").read_text():
                continue
            command = (entry / "cmdline").read_bytes()
            named = marker in (entry / "environ").read_bytes() or marker in command
            links = [entry / "cwd", *(entry / "fd").iterdir()] if not named else []
            for link in links:
                try:
                    named = named or os.fsencode(os.readlink(link)).startswith(marker)
                except OSError:
                    continue
            if named:
                found[int(entry.name)] = command.replace(b"\0", b" ")[:300].decode(errors="replace")
        except OSError:
            continue
    return found


@pytest.mark.parametrize("script", bench_scripts(), ids=lambda path: path.stem)
def test_smoke(script: Path, shared_broker, tmp_path):
    results = BENCH / "RESULTS.md"
    before = hashlib.sha256(results.read_bytes()).hexdigest()
    env = {name: value for name, value in os.environ.items() if name in PASSED_ON or name.startswith("LC_")}
    env["KAFKA_BOOTSTRAP_SERVERS"] = shared_broker.bootstrap
    # The bench's temporary folders (its stacks, client sockets, JVM state) in one of the smoke's own, short enough
    # for Unix socket paths: whatever still names it once the bench has exited was left running by the bench.
    scratch = Path(tempfile.mkdtemp(prefix="smoke-", dir="/tmp"))
    env["TMPDIR"] = str(scratch)
    output = tmp_path / f"{script.stem}.log"
    try:
        code, seconds = run_smoke(script, env, output)
        printed = output.read_text(errors="replace")
        tail = "\n".join(printed.splitlines()[-60:])
        assert code == 0, f"bench/{script.name} --smoke exited with {code} after {seconds:.0f} s:\n{tail}"
        assert f"{SMOKE_PASSED} " in printed, f"bench/{script.name} --smoke never reached its report:\n{tail}"
        assert hashlib.sha256(results.read_bytes()).hexdigest() == before, \
            f"bench/{script.name} --smoke wrote RESULTS.md"
        deadline = time.monotonic() + LEFT_RUNNING_GRACE_S  # what the bench stopped may take a moment to exit
        while (left := _named_processes(scratch)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not left, f"bench/{script.name} --smoke left processes running: {left}"
    finally:
        for pid in _named_processes(scratch):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(scratch, ignore_errors=True)
