import contextlib
import os
import subprocess
import sys
import time

import pytest

from console.paths import PROJECT_DIR


@pytest.fixture(scope="session")
def spark_session(tmp_path_factory):
    """The session's one SparkSession, used to read replay output back (replays themselves run via spark-submit)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import logging

    from pyspark.sql import SparkSession

    logging.getLogger("py4j").setLevel(logging.WARNING)  # py4j logs at interpreter exit, after pytest closed its streams

    spark = (SparkSession.builder.master("local[1]").appName("console-tests").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "1").config("spark.driver.memory", "512m").getOrCreate())
    yield spark
    spark.stop()


@pytest.fixture
def replay_env(settings, tmp_path, celery_worker_process):
    """Replays write under a per-test folder; the real Celery worker (started with the session) runs them."""
    settings.REPLAY_OUTPUT_DIR = str(tmp_path)
    yield tmp_path


@pytest.fixture(scope="session")
def spark_rpc_probe():
    """reaches(port, endpoint, secret="") -> (bool, why): whether a Spark RPC client in a process and JVM of its own
    (tests/sparkjobs/spark_rpc_probe.py, as any other process of the host could run one) gets `endpoint` at
    127.0.0.1:port to answer, with `secret` as spark.authenticate.secret or with no authentication at all."""
    import json

    probe = subprocess.Popen([sys.executable, str(PROJECT_DIR / "tests" / "sparkjobs" / "spark_rpc_probe.py")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             cwd=PROJECT_DIR, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert json.loads(probe.stdout.readline() or "{}").get("ready"), "the Spark RPC probe did not start"

    def reaches(port: int, endpoint: str, secret: str = "") -> tuple[bool, str]:
        probe.stdin.write(json.dumps({"port": port, "endpoint": endpoint, "secret": secret}) + "\n")
        probe.stdin.flush()
        answer = json.loads(probe.stdout.readline())
        return answer["reached"], answer["why"]

    yield reaches
    probe.stdin.close()
    try:
        probe.wait(20)
    except subprocess.TimeoutExpired:
        probe.kill()
        probe.wait(10)


def open_to_others(root) -> list[str]:
    """Paths under `root` (itself included, links left out) that give their group or others any access."""
    from pathlib import Path

    root = Path(root)
    return [f"{path} {path.lstat().st_mode & 0o777:04o}" for path in [root, *root.rglob("*")]
            if not path.is_symlink() and path.lstat().st_mode & 0o077]


def wait_finished(job, timeout: float = 180.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.finished:
            return job
        time.sleep(0.5)
    raise AssertionError(f"replay #{job.pk} still {job.state} after {timeout} s")


@contextlib.contextmanager
def private_worker(queue: str, env: dict[str, str], log_path):
    """A Celery worker of its own, consuming only `queue` (so a test may kill it or give it other settings);
    yields the process once it answers a ping."""
    from console.celery import app

    name = f"{queue}-{os.getpid()}"
    with open(log_path, "w") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "console", "worker", "--pool=solo", "-Q", queue,
             f"--hostname={name}@%h"], cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while not any(name in host for reply in (app.control.ping(timeout=0.5) or []) for host in reply):
                assert time.monotonic() < deadline and worker.poll() is None, f"worker {name} did not start"
            yield worker
        finally:
            if worker.poll() is None:
                worker.terminate()
                try:
                    worker.wait(30)
                except subprocess.TimeoutExpired:
                    worker.kill()
                    worker.wait(10)


def wait_running(job, timeout: float = 90.0):
    """Until the worker has started the job's Spark driver."""
    deadline = time.monotonic() + timeout
    while not (job.state == job.State.RUNNING and job.driver_pid):
        assert time.monotonic() < deadline, f"replay #{job.pk} never started: {job.state}"
        time.sleep(0.2)
        job.refresh_from_db()
    return job


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    """A Spark standalone master and one worker (pyspark's spark-class), started on first use, once."""
    from devstack.spark_cluster import SparkStandalone

    cluster = SparkStandalone(home=tmp_path_factory.mktemp("spark-cluster"))
    cluster.start()
    try:
        cluster.wait_ready()
    except Exception:
        cluster.stop()
        raise
    yield cluster
    cluster.stop()


S3_BUCKET = "replays"


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """S3Proxy on a temporary folder (devstack.s3proxy), started on first use, with one bucket."""
    from devstack.s3proxy import S3Server

    server = S3Server(home=tmp_path_factory.mktemp("s3"))
    server.create_bucket(S3_BUCKET)
    server.start()
    try:
        server.wait_ready()
    except Exception:
        server.stop()
        raise
    yield server
    server.stop()


def s3_environment(server) -> dict[str, str]:
    """The settings and secrets a process needs for s3a:// output, as production gives them: the keys in
    variables whose names the settings hold (here not the default names, so the indirection is exercised)."""
    return {"REPLAY_S3_ENDPOINT": server.endpoint, "REPLAY_S3_PATH_STYLE": "1",
            "REPLAY_S3_ACCESS_KEY_ENV": "TEST_S3_ACCESS_KEY", "REPLAY_S3_SECRET_KEY_ENV": "TEST_S3_SECRET_KEY",
            "TEST_S3_ACCESS_KEY": server.access_key, "TEST_S3_SECRET_KEY": server.secret_key}


@pytest.fixture
def s3_settings(s3_server, settings, monkeypatch):
    """This process (submit, the job page) configured for the session's S3Proxy."""
    env = s3_environment(s3_server)
    settings.REPLAY_S3_ENDPOINT, settings.REPLAY_S3_PATH_STYLE = env["REPLAY_S3_ENDPOINT"], True
    settings.REPLAY_S3_ACCESS_KEY_ENV = env["REPLAY_S3_ACCESS_KEY_ENV"]
    settings.REPLAY_S3_SECRET_KEY_ENV = env["REPLAY_S3_SECRET_KEY_ENV"]
    monkeypatch.setenv("TEST_S3_ACCESS_KEY", s3_server.access_key)
    monkeypatch.setenv("TEST_S3_SECRET_KEY", s3_server.secret_key)
    return s3_server


@pytest.fixture(scope="module")
def cluster_queue(spark_cluster, s3_server, django_db_setup, redis_node, kafka_node, tmp_path_factory):
    """A Celery worker whose replays go to the standalone cluster (SPARK_MASTER in its environment, as in
    production) and may write to the session's S3Proxy; yields the queue that reaches it."""
    from tests.fixtures.celery import celery_env

    queue = "spark-cluster"
    env = {**celery_env(redis_node, kafka_node), "SPARK_MASTER": spark_cluster.url,
           "SPARK_AUTHENTICATE_SECRET": spark_cluster.secret, **s3_environment(s3_server)}
    with private_worker(queue, env, tmp_path_factory.mktemp("cluster-worker") / "worker.log"):
        yield queue


@pytest.fixture
def on_cluster(cluster_queue, monkeypatch):
    """Replays submitted by this test run on the standalone cluster."""
    from sparkjobs import services
    from sparkjobs.tasks import run_replay

    monkeypatch.setattr(services, "_enqueue", lambda job_id: run_replay.apply_async((job_id,), queue=cluster_queue))
    return cluster_queue


def driver_runs(pid: int, job_id: int) -> bool:
    """Whether the test workers' resident Spark driver `pid` still runs the replay `job_id` (False once the driver
    has cancelled it, or has stopped)."""
    from django.test import override_settings

    from sparkjobs import runner
    from tests.fixtures.celery import WORKER_REPLAY_DIR

    with override_settings(REPLAY_OUTPUT_DIR=str(WORKER_REPLAY_DIR)):
        for driver in runner.running_drivers():
            if driver.pid == pid:
                answer = driver.ask({"ping": True})
                return answer is not None and str(job_id) in answer["jobs"]
    return False


def wait_driver_done(pid: int, job_id: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while driver_runs(pid, job_id):
        assert time.monotonic() < deadline, f"the Spark driver {pid} still runs replay #{job_id}"
        time.sleep(0.3)
