"""Stopping a driver's process group: quick once it has exited, even while it waits to be reaped; and the security
settings a driver is started with."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

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


def test_a_local_driver_authenticates_with_sparks_own_secret_and_a_cluster_needs_the_shared_one(settings):
    settings.SPARK_MASTER, settings.SPARK_AUTHENTICATE_SECRET = "local[*]", ""
    assert runner.spark_security() == {"spark.authenticate": "true", "spark.hadoop.fs.permissions.umask-mode": "077"}
    settings.SPARK_MASTER = "spark://10.0.0.5:7077"
    with pytest.raises(RuntimeError, match="set SPARK_AUTHENTICATE_SECRET"):
        runner.spark_security()
    settings.SPARK_AUTHENTICATE_SECRET = "s3cret-shared"
    found = runner.spark_security()
    assert found["spark.authenticate.secret"] == "s3cret-shared" and found["spark.network.crypto.enabled"] == "true"


def test_the_secret_reaches_spark_submit_in_a_0600_file_never_on_its_command_line(settings, tmp_path):
    settings.SPARK_MASTER, settings.SPARK_AUTHENTICATE_SECRET = "spark://10.0.0.5:7077", "s3cret-shared"
    state = tmp_path / "abc.json"
    command = runner.driver_command(tmp_path, state, ["/jars/kafka.jar"])
    assert not any("s3cret-shared" in part for part in command)
    properties = Path(command[command.index("--properties-file") + 1])
    assert properties == state.with_suffix(".conf") and properties.stat().st_mode & 0o777 == 0o600
    assert "spark.authenticate.secret s3cret-shared\n" in properties.read_text()
    assert "--load-spark-defaults" in command


def test_the_code_shipped_to_spark_imports_without_the_repository(tmp_path):
    """The driver and executors see only --py-files: every module the shipped decoding imports must be inside them
    (a module added to gateway/kafka and imported by schema_registry.py but not listed broke typed replays)."""
    import sys

    shipped = runner.gateway_zip(tmp_path)
    probe = ("import sys; sys.path[:] = [p for p in sys.path if p not in ('', %r)]; sys.path.insert(0, %r); "
             "import gateway.kafka.schema_registry, gateway.secret_files, gateway.user_regex; "
             "print(gateway.kafka.schema_registry.__file__)") % (str(runner.GATEWAY_DIR.parent), str(shipped))
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(shipped)), done.stdout
