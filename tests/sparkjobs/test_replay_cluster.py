"""Replays on a Spark standalone cluster (master and worker from pyspark's spark-class): the path a team takes
beyond one machine, where executors run in the worker's processes, not in the driver's JVM."""

import json
import time
from pathlib import Path

import pytest

from console.audit.actor import Actor
from sparkjobs.services import replay_submit
from tests.sparkjobs.conftest import wait_finished

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.django_db(transaction=True)]


def test_a_replay_runs_on_the_standalone_cluster(on_cluster, spark_cluster, replay_env, topic_factory, produce,
                                                  make_user, local_cluster, spark_session):
    topic = topic_factory("replay-cluster", partitions=2)
    produce(topic, [(p, f"k{p}-{i}".encode(), json.dumps({"n": i}).encode(), None) for p in (0, 1) for i in range(30)])
    actor = Actor(user=make_user("cluster-replayer", "operator"), source="cli")
    before = {path.name for path in (spark_cluster.home / "work").iterdir()}

    job = wait_finished(replay_submit(actor=actor, cluster="local", topic=topic, partitions=None, start="earliest",
                                      end="latest", sink="parquet", filter_expr="get_json_object(value, '$.n') < 10",
                                      reason="on the cluster"))

    assert job.state == "succeeded", job.error
    assert (job.records_read, job.records_written) == (60, 20)
    rows = spark_session.read.parquet(job.output_dir).collect()
    assert sorted((r.partition, r.offset) for r in rows) == [(p, i) for p in (0, 1) for i in range(10)]
    # The worker ran an application of its own for this replay: its executors, not the driver, did the work.
    apps = {path.name for path in (spark_cluster.home / "work").iterdir()} - before
    assert len(apps) == 1 and next(iter(apps)).startswith("app-")


def test_the_clusters_master_takes_no_client_without_its_secret_and_the_driver_keeps_it_off_the_command_line(
        on_cluster, spark_cluster, spark_rpc_probe, replay_env):
    """Master, worker, driver and executors share Spark's secret (encrypted traffic: the cluster is not this
    machine in production); a client without it, or with another, gets no answer from the master."""
    from django.test import override_settings

    from sparkjobs import runner
    from tests.fixtures.celery import WORKER_REPLAY_DIR

    assert spark_rpc_probe(spark_cluster.port, "Master", secret=spark_cluster.secret) == (True, "")
    assert not spark_rpc_probe(spark_cluster.port, "Master")[0]
    assert not spark_rpc_probe(spark_cluster.port, "Master", secret="a-guess")[0]
    def cluster_drivers():
        with override_settings(REPLAY_OUTPUT_DIR=str(WORKER_REPLAY_DIR)):
            return [d for d in runner.running_drivers()
                    if spark_cluster.url.encode() in Path(f"/proc/{d.pid}/cmdline").read_bytes()]

    deadline = time.monotonic() + 60  # a driver busy on a loaded host may miss one ping
    while not (drivers := cluster_drivers()) and time.monotonic() < deadline:
        time.sleep(1)
    assert drivers, "the cluster's worker has no driver running (it starts one as it comes up)"
    for driver in drivers:  # what `ps` shows every user
        assert spark_cluster.secret.encode() not in Path(f"/proc/{driver.pid}/cmdline").read_bytes()


def test_a_replay_on_the_cluster_writes_to_object_storage_and_the_page_streams_it_back(
        on_cluster, s3_settings, replay_env, topic_factory, produce, make_user, local_cluster, client_for,
        spark_session):
    from tests.sparkjobs.conftest import S3_BUCKET

    topic = topic_factory("replay-s3", partitions=2)
    produce(topic, [(p, f"k{p}-{i}".encode(), f"v{i}".encode(), [("h", b"x")]) for p in (0, 1) for i in range(25)])
    actor = Actor(user=make_user("s3-replayer", "operator"), source="cli")

    job = wait_finished(replay_submit(actor=actor, cluster="local", topic=topic, partitions=None, start="earliest",
                                      end="latest", sink="parquet", output_uri=f"s3a://{S3_BUCKET}/team-a/",
                                      reason="to object storage"))

    assert job.state == "succeeded", job.error
    assert job.output_dir == f"s3a://{S3_BUCKET}/team-a/replay-{job.pk}"
    assert (job.records_read, job.records_written) == (50, 50)
    # S3Proxy keeps each object as a file under its folder: what Spark wrote through the S3 API is there.
    stored = s3_settings.home / "data" / S3_BUCKET / "team-a" / f"replay-{job.pk}"
    rows = spark_session.read.parquet(str(stored)).collect()
    assert sorted((r.partition, r.offset, bytes(r.value)) for r in rows) == \
        [(p, i, f"v{i}".encode()) for p in (0, 1) for i in range(25)]
    assert not (replay_env / f"replay-{job.pk}").exists()

    client = client_for(actor.user)
    page = client.get(f"/clusters/local/replays/{job.pk}/").content.decode()
    names = sorted({part.split('"')[0] for part in page.split(f"/replays/{job.pk}/files/")[1:]})
    assert names == sorted(p.name for p in stored.glob("part-*")) and names
    download = client.get(f"/clusters/local/replays/{job.pk}/files/{names[0]}")
    assert b"".join(download.streaming_content) == (stored / names[0]).read_bytes()
    assert client.get(f"/clusters/local/replays/{job.pk}/files/_SUCCESS").status_code == 404


def test_object_storage_without_keys_or_with_a_bad_uri_is_refused_at_submit(settings, monkeypatch, topic_factory,
                                                                             produce, make_user, local_cluster):
    from console.errors import ConsoleError
    from sparkjobs.models import ReplayJob

    topic = topic_factory("replay-s3-refused")
    produce(topic, [(0, None, b"v", None)])
    actor = Actor(user=make_user("s3-refused", "operator"), source="cli")
    settings.REPLAY_S3_ACCESS_KEY_ENV, settings.REPLAY_S3_SECRET_KEY_ENV = "NO_SUCH_KEY_VAR", "NO_SUCH_SECRET_VAR"
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)

    def submit(**kwargs):
        return replay_submit(actor=actor, cluster="local", topic=topic, partitions=None, start="earliest",
                             end="latest", reason="r", **kwargs)

    with pytest.raises(ConsoleError, match="NO_SUCH_KEY_VAR"):
        submit(sink="parquet", output_uri="s3a://replays/x")
    with pytest.raises(ConsoleError, match="s3a://BUCKET"):
        submit(sink="parquet", output_uri="/etc/cron.d")
    with pytest.raises(ConsoleError, match="for file sinks"):
        submit(sink="topic", sink_topic="elsewhere", output_uri="s3a://replays/x")
    assert not ReplayJob.objects.exists()
