import re
import threading
import time

import pytest
import redis

from offsets.tasks import sample_lag

pytestmark = [pytest.mark.django_db, pytest.mark.kafka]


def _tasks_sent(client, action) -> list[str]:
    """The task names pushed onto Celery's queues while `action` runs, read off Redis's MONITOR: a Celery worker of
    the session may take a message off the queue before the test could look at it."""
    sent, ready = [], threading.Event()

    def watch(monitor):
        ready.set()
        try:
            for event in monitor.listen():
                command = event["command"]
                if command.startswith("LPUSH") and "alerts.tasks." in command:
                    sent.extend(re.findall(r"alerts\.tasks\.\w+", command.split(" ", 2)[2])[:1])
        except (redis.ConnectionError, ValueError, AttributeError):
            pass  # the monitor closed

    monitor = client.monitor().__enter__()
    thread = threading.Thread(target=watch, args=(monitor,), daemon=True)
    thread.start()
    ready.wait(5)
    try:
        result = action()
        time.sleep(1.0)  # the push travels the monitor's connection after the command returns
    finally:
        monitor.connection.disconnect()
        thread.join(5)
    return result, sent


def test_every_lag_sweep_is_followed_by_an_alert_evaluation(local_cluster, redis_node):
    client = redis.Redis.from_url(redis_node.url)
    outcome, sent = _tasks_sent(client, sample_lag)
    assert "local" in outcome
    assert sent == ["alerts.tasks.evaluate_alerts"]
