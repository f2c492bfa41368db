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


@pytest.mark.kafka  # for the session's Redis, which the web processes share the rendering through
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
    third = client.get("/metrics", headers=headers).content.decode()
    assert 'cluster="cache-b"' in third  # expired: rendered again with what is stored now


@pytest.mark.kafka  # the session's Redis
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

    shared.delete(f"{key}:rendering")  # that one finished or died: the next scrape renders
    with pytest.raises(RuntimeError):
        client.get("/metrics", headers=headers)
    assert renderings == [False]
    assert shared.get(f"{key}:rendering") is None  # a failed rendering does not hold the others back
