import os
import sys
import time

import pytest


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


def wait_finished(job, timeout: float = 180.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.finished:
            return job
        time.sleep(0.5)
    raise AssertionError(f"replay #{job.pk} still {job.state} after {timeout} s")
