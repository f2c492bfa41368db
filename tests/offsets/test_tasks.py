import subprocess
import sys
import time
import uuid

import pytest
from django.conf import settings

from console.paths import PROJECT_DIR
from offsets.models import LagSample, LagSweep
from tests.fixtures.celery import celery_env

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]


def test_the_beat_schedule_names_the_sampler_task():
    from console.celery import app

    app.loader.import_default_modules()
    entry = settings.CELERY_BEAT_SCHEDULE["sample-lag"]
    assert entry["task"] in app.tasks
    assert entry["schedule"] == settings.LAG_SAMPLE_INTERVAL_S and entry["options"]["expires"] > 0


def test_celery_beat_and_a_worker_sample_lag_periodically(local_cluster, celery_worker_process, redis_node,
                                                          kafka_node, topic_factory, produce, commit, tmp_path):
    topic = topic_factory("beat")
    produce(topic, [(0, None, b"x", None)] * 6)
    group = f"beat-{uuid.uuid4().hex[:8]}"
    commit(group, {(topic, 0): 2})
    env = {**celery_env(redis_node, kafka_node), "LAG_SAMPLE_INTERVAL_S": "2"}
    log = open(tmp_path / "beat.log", "w")
    beat = subprocess.Popen([sys.executable, "-m", "celery", "-A", "console", "beat", "--loglevel=INFO",
                             "--schedule", str(tmp_path / "schedule"), "--max-interval", "1"],
                            cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and LagSample.objects.filter(group=group, step=0).count() < 2:
            time.sleep(0.5)
    finally:
        beat.terminate()
        beat.wait(15)
        log.close()
    samples = list(LagSample.objects.filter(group=group, step=0).order_by("time"))
    assert len(samples) >= 2, (tmp_path / "beat.log").read_text()[-2000:]
    assert {(s.topic, s.lag, s.committed, s.end) for s in samples} == {(topic, 4, 2, 6)}
    assert samples[1].time > samples[0].time
    assert LagSweep.objects.get(cluster="local").last_ok_at is not None
