"""/health against the real services: all up, then Redis stopped; details only for people and the scraper, and for
anonymous callers counts from a snapshot, never a call to Kafka of their own."""

import os
import time

import pytest
from django.test import Client

from devstack.kafka import free_port

pytestmark = pytest.mark.django_db

TOKEN = "health-test-token"


def test_health_is_200_when_everything_is_up(client, celery_worker_process, settings):
    settings.METRICS_TOKEN = TOKEN
    response = client.get("/health", headers={"Authorization": f"Bearer {TOKEN}"})

    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert body["database"]["ok"] and body["redis"]["ok"]
    assert body["celery"] == {"ok": True, "workers": 1}
    assert body["kafka"]["local"] == {"reachable": True, "brokers": 1, "controller": 1, "error": None}


def test_health_needs_no_login_and_reveals_no_addresses(client, kafka_node, redis_node):
    body = client.get("/health").content.decode()

    assert str(kafka_node.port) not in body and str(redis_node.port) not in body


def test_anonymous_callers_get_up_or_down_only(client, celery_worker_process, settings):
    from console.clusters.models import Cluster

    closed = free_port()
    Cluster.objects.create(name="closed", bootstrap_servers=f"127.0.0.1:{closed}")
    settings.METRICS_TOKEN = TOKEN
    _wait_for_worker()

    anonymous = client.get("/health")
    wrong_token = client.get("/health", headers={"Authorization": "Bearer not-the-token"})

    for response in (anonymous, wrong_token):
        body = response.json()
        assert body["database"] == body["redis"] == body["celery"] == {"ok": True}
        assert body["kafka"] == {"clusters": 2, "unreachable": 1}
        assert set(body["audit_witness"]) == {"state"}
        assert set(body) == {"status", "database", "redis", "celery", "kafka", "audit_witness", "processes"}
        assert str(closed) not in response.content.decode() and "closed" not in response.content.decode()


@pytest.mark.parametrize("caller", ["token", "login"])
def test_people_and_the_scraper_see_why_a_cluster_is_down(caller, client, client_for, viewer, redis_node, settings):
    from console.clusters.models import Cluster

    closed = free_port()
    Cluster.objects.create(name="closed", bootstrap_servers=f"127.0.0.1:{closed}")
    settings.METRICS_TOKEN = TOKEN
    if caller == "token":
        response = client.get("/health", headers={"Authorization": f"Bearer {TOKEN}"})
    else:
        response = client_for(viewer).get("/health")

    body = response.json()
    assert body["kafka"]["closed"]["reachable"] is False and body["kafka"]["closed"]["error"]
    assert body["database"]["vendor"] and "workers" in body["celery"]
    assert "state" in body["audit_witness"] and "pending" in body["audit_witness"]


def test_without_a_metrics_token_a_bearer_header_shows_nothing_more(client, redis_node, settings):
    settings.METRICS_TOKEN = ""

    body = client.get("/health", headers={"Authorization": "Bearer "}).json()

    assert body["kafka"] == {"clusters": 1, "unreachable": 0} and body["database"] == {"ok": True}


def test_health_is_503_within_seconds_when_redis_is_stopped(client, celery_worker_process, redis_node):
    redis_node.stop()
    try:
        started = time.monotonic()
        response = client.get("/health")
        elapsed = time.monotonic() - started
    finally:
        redis_node.start()

    body = response.json()
    assert response.status_code == 503 and body["status"] == "degraded"
    assert body["redis"]["ok"] is False and body["celery"]["ok"] is False
    assert body["kafka"] == {"clusters": 1, "unreachable": 0}
    assert elapsed < 5


def test_health_stays_200_with_a_registered_cluster_down_and_says_which(client, redis_node, celery_worker_process,
                                                                       settings):
    from console.clusters.models import Cluster

    Cluster.objects.create(name="down", bootstrap_servers=f"127.0.0.1:{free_port()}")
    settings.METRICS_TOKEN = TOKEN
    _wait_for_worker()  # an earlier test restarted Redis under it

    started = time.monotonic()
    response = client.get("/health", headers={"Authorization": f"Bearer {TOKEN}"})

    body = response.json()
    assert response.status_code == 200 and body["status"] == "ok"
    assert body["kafka"]["down"]["reachable"] is False and body["kafka"]["local"]["reachable"] is True
    assert body["kafka_summary"] == {"clusters": 2, "unreachable": ["down"]}
    assert time.monotonic() - started < 6


def test_liveness_touches_nothing(client, db, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # down: readiness must say so, liveness not look
    response = client.get("/health/live")

    assert response.status_code == 200 and response.json() == {"status": "alive"}
    ready = client.get("/health/ready")
    assert ready.status_code == 503 and ready.json()["status"] == "degraded"
    assert ready.json()["redis"] == ready.json()["celery"] == {"ok": False}


def test_anonymous_callers_share_one_snapshot_and_never_wait_on_a_hanging_cluster_each(
        client, client_for, viewer, celery_worker_process, silent_server, settings):
    """A cluster that accepts connections and never answers costs each caller who makes the console ask it the
    whole request timeout: anonymous callers pay it once per snapshot, not once per hit."""
    from console.clusters.models import Cluster

    settings.KAFKA_REQUEST_TIMEOUT_S, settings.KAFKA_UNREACHABLE_BACKOFF_S = 1.5, 0.0
    settings.HEALTH_ANONYMOUS_CACHE_S = 30.0
    Cluster.objects.create(name="hanging-payments-eu", bootstrap_servers=silent_server)
    _wait_for_worker()

    began = time.monotonic()
    first = client.get("/health")
    made = time.monotonic() - began
    began = time.monotonic()
    later = [client.get("/health") for _ in range(20)]
    twenty = time.monotonic() - began

    assert made >= 1.4  # the snapshot asked the hanging cluster and waited its timeout out
    assert twenty < 1.0, twenty  # twenty callers after it asked nobody
    assert all(r.json() == first.json() and r.status_code == first.status_code for r in later)
    assert first.json()["kafka"] == {"clusters": 2, "unreachable": 1}
    assert all("hanging-payments-eu" not in r.content.decode() and silent_server not in r.content.decode()
               for r in [first, *later])
    # A person gets a fresh answer each time, with the names: it asks the hanging cluster again.
    person = client_for(viewer)
    began = time.monotonic()
    details = person.get("/health").json()
    assert time.monotonic() - began >= 1.4
    assert details["kafka"]["hanging-payments-eu"]["reachable"] is False


def test_the_details_say_when_the_consoles_files_are_open_to_other_users(client_for, viewer, redis_node, settings,
                                                                            tmp_path):
    replays = tmp_path / "replays"
    replays.mkdir(mode=0o700)
    settings.REPLAY_OUTPUT_DIR = str(replays)
    person = client_for(viewer)
    assert {"path": str(replays), "mode": "0700"} not in person.get("/health").json()["files"]["open"]

    os.chmod(replays, 0o755)  # as a folder made before the console set its umask
    files = person.get("/health").json()["files"]

    assert files["ok"] is False and {"path": str(replays), "mode": "0755"} in files["open"]
    assert "files" not in Client().get("/health").json()  # anonymous callers are not told


def _wait_for_worker(timeout: float = 30.0) -> None:
    from console.celery import app

    deadline = time.monotonic() + timeout
    while True:
        try:
            if app.control.ping(timeout=0.5):
                return
        except Exception:  # the client's connection to the restarted Redis is stale at first
            pass
        assert time.monotonic() < deadline, "the Celery worker does not answer"
        time.sleep(0.5)
