"""/health against the real services: all up, then Redis stopped; details only for people and the scraper."""

import time

import pytest

from console.devstack.kafka import free_port

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
        assert body["kafka"] == {"closed": {"reachable": False}, "local": {"reachable": True}}
        assert set(body["audit_witness"]) == {"state"}
        assert str(closed) not in response.content.decode()


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

    assert body["kafka"]["local"] == {"reachable": True} and body["database"] == {"ok": True}


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
    assert body["kafka"]["local"]["reachable"] is True
    assert elapsed < 5


def test_health_stays_200_with_a_registered_cluster_down_and_says_which(client, redis_node, celery_worker_process):
    from console.clusters.models import Cluster

    Cluster.objects.create(name="down", bootstrap_servers=f"127.0.0.1:{free_port()}")
    _wait_for_worker()  # an earlier test restarted Redis under it

    started = time.monotonic()
    response = client.get("/health")

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
