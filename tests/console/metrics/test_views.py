"""/metrics' door: off without a token, 401 without the right bearer token, no session needed, GET only."""

from __future__ import annotations

import time

import pytest
import redis
from django.utils import timezone
from prometheus_client import CONTENT_TYPE_LATEST

from tests.console.metrics.conftest import TOKEN, Scrape

pytestmark = pytest.mark.django_db


def test_unset_token_means_metrics_are_off(client, settings):
    settings.METRICS_TOKEN = ""

    response = client.get("/metrics", headers={"Authorization": "Bearer "})

    assert response.status_code == 404


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN,
                                   "Bearer \u00fcn\u00efc\u00f8d\u00e9"])
def test_missing_or_wrong_token_is_401_with_a_bearer_challenge(client, settings, header):
    settings.METRICS_TOKEN = TOKEN

    response = client.get("/metrics", headers={"Authorization": header} if header else {})

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert b"kafka_console" not in response.content


def test_right_token_answers_without_a_session_in_prometheus_format(client, settings):
    settings.METRICS_TOKEN = TOKEN

    response = client.get("/metrics", headers={"Authorization": f"bearer {TOKEN}"})

    assert response.status_code == 200
    assert response["Content-Type"] == CONTENT_TYPE_LATEST
    assert "sessionid" not in response.cookies
    families = Scrape(response.content.decode()).families
    expected = {"group_lag", "group_status", "group_rebalances", "lag_sampler_duration_seconds",
                "lag_sampler_last_success_timestamp_seconds", "lag_sampler_last_error_timestamp_seconds",
                "recorder_behind_records", "recorder_behind_seconds", "recorder_state", "audit_events",
                "replay_jobs"}
    assert {"kafka_console_" + name for name in expected} <= set(families)
    assert all(f.documentation for f in families.values())
    assert families["kafka_console_group_rebalances"].type == "counter"
    assert families["kafka_console_audit_events"].type == "counter"


def test_only_get(client, settings):
    settings.METRICS_TOKEN = TOKEN

    response = client.post("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})

    assert response.status_code == 405


def _until(check, what: str, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, what
        time.sleep(0.1)
    return found


@pytest.mark.kafka  # for the session's Redis, which the web processes share the rendering through
@pytest.mark.django_db(transaction=True)  # the next rendering is made in a thread, on a connection of its own
def test_scrapes_close_together_share_one_rendering_until_it_expires(client, settings, redis_node):
    from console.shared_table import forget_redis_state
    from offsets.models import LagSweep

    settings.METRICS_TOKEN, settings.METRICS_CACHE_S, settings.REDIS_URL = TOKEN, 1.5, redis_node.url
    forget_redis_state()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    redis.Redis.from_url(redis_node.url).delete("console:metrics:exposition:0")
    LagSweep.objects.create(cluster="cache-a", groups=1, duration_ms=1000, last_ok_at=timezone.now())
    first = client.get("/metrics", headers=headers).content.decode()
    LagSweep.objects.create(cluster="cache-b", groups=1, duration_ms=2000, last_ok_at=timezone.now())
    second = client.get("/metrics", headers=headers).content.decode()
    assert 'cluster="cache-a"' in first and second == first  # within METRICS_CACHE_S: the same rendering
    time.sleep(1.6)
    started = time.monotonic()
    third = client.get("/metrics", headers=headers).content.decode()
    # Expired: the previous rendering at once, while the next is made in the background with what is stored now.
    assert third == first and time.monotonic() - started < 1.0
    _until(lambda: 'cluster="cache-b"' in client.get("/metrics", headers=headers).content.decode(),
           "the rendering made in the background was never served")


@pytest.mark.kafka  # the session's Redis
@pytest.mark.django_db(transaction=True)  # the next rendering is made in a thread, on a connection of its own
def test_while_one_process_renders_the_others_serve_the_rendering_before(client, settings, redis_node, monkeypatch):
    from console.metrics import views
    from console.shared_table import forget_redis_state
    from offsets.models import LagSweep

    settings.METRICS_TOKEN, settings.METRICS_CACHE_S, settings.REDIS_URL = TOKEN, 30, redis_node.url
    forget_redis_state()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    key = "console:metrics:exposition:0"
    shared = redis.Redis.from_url(redis_node.url)
    shared.delete(key, f"{key}:last", f"{key}:rendering")
    LagSweep.objects.create(cluster="swr-a", groups=1, duration_ms=1000, last_ok_at=timezone.now())
    first = client.get("/metrics", headers=headers).content
    assert b'cluster="swr-a"' in first

    shared.delete(key)  # expired
    shared.set(f"{key}:rendering", b"1", px=60_000)  # and another web process is rendering it again
    renderings = []

    def render(partitions):
        renderings.append(partitions)
        raise RuntimeError("the database went away")

    monkeypatch.setattr(views, "_render", render)
    assert client.get("/metrics", headers=headers).content == first
    assert renderings == []

    shared.delete(f"{key}:rendering")  # that one finished or died: this scrape starts the next rendering
    assert client.get("/metrics", headers=headers).content == first  # and is served the previous one meanwhile
    _until(lambda: renderings == [False] and shared.get(f"{key}:rendering") is None,
           "the failed rendering held the others back")  # it fails, and lets go of the lock all the same
    assert shared.get(key) is None and shared.get(f"{key}:last") == first

    shared.delete(f"{key}:last")  # no rendering at all: the scrape waits for its own
    with pytest.raises(RuntimeError):
        client.get("/metrics", headers=headers)
    assert renderings == [False, False] and shared.get(f"{key}:rendering") is None
