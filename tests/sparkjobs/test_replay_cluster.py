"""Replays on a Spark standalone cluster (master and worker from pyspark's spark-class): the path a team takes
beyond one machine, where executors run in the worker's processes, not in the driver's JVM."""

import json

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
