import json

import pytest
import redis

from offsets.tasks import sample_lag

pytestmark = [pytest.mark.django_db, pytest.mark.kafka]


def test_every_lag_sweep_is_followed_by_an_alert_evaluation(local_cluster, redis_node):
    client = redis.Redis.from_url(redis_node.url)
    client.delete("celery")
    outcome = sample_lag()
    assert "local" in outcome
    queued = [json.loads(raw)["headers"]["task"] for raw in client.lrange("celery", 0, -1)]
    assert queued == ["alerts.tasks.evaluate_alerts"]
    client.delete("celery")
