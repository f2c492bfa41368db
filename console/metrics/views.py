"""/metrics: off (404) unless CONSOLE_METRICS_TOKEN is set; then a scraper sends it as a bearer token."""

from __future__ import annotations

import hmac
import logging
import threading

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET
import redis
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from console.http import HtmxHttpRequest
from console.metrics.collector import ConsoleCollector
from console.shared_table_stores import redis_client, redis_failed

log = logging.getLogger(__name__)

MSG_OFF = "Metrics are off: CONSOLE_METRICS_TOKEN is not set."
MSG_TOKEN = "/metrics needs the header 'Authorization: Bearer <CONSOLE_METRICS_TOKEN>'.\n"


def bearer_matches(header: str, token: str) -> bool:
    scheme, _, given = header.partition(" ")
    # Compared as bytes in constant time: a str compare_digest refuses non-ASCII input instead of saying no.
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


@login_not_required  # Prometheus has no session; the token is the credential
@require_GET
def metrics(request: HtmxHttpRequest) -> HttpResponse:
    token = settings.METRICS_TOKEN
    if not token:
        raise Http404(MSG_OFF)
    if not bearer_matches(request.headers.get("Authorization", ""), token):
        response = HttpResponse(MSG_TOKEN, status=401, content_type="text/plain; charset=utf-8")
        response["WWW-Authenticate"] = "Bearer"
        return response
    partitions = request.GET.get("partitions") in ("1", "true")
    return HttpResponse(exposition(partitions), content_type=CONTENT_TYPE_LATEST)


# While one web process renders /metrics, the others serve the rendering before it, kept this long after it was
# made; the lock on rendering lapses after RENDERING_LOCK_S should its holder die mid-way.
LAST_RENDERING_KEPT_S = 120.0
RENDERING_LOCK_S = 60.0


def exposition(partitions: bool) -> bytes:
    """The scrape's text, shared by every web process for METRICS_CACHE_S seconds: at 50,000 groups writing it
    takes seconds of a web worker on a busy machine, and the figures behind it change once per lag sweep (30 s), so
    scrapers close together (an HA pair of Prometheus servers, several dashboards) are served one rendering. Once it
    expires, the scrape that finds it so is served the previous rendering at once and one process renders the next
    in a thread of its own: no scrape waits seconds for a rendering (at 50,000 groups the slowest tenth of scrapes
    did), and web workers never render the same text side by side. Only when there is no rendering at all does a
    scrape wait for one."""
    key = f"console:metrics:exposition:{int(partitions)}"
    client = redis_client(settings.REDIS_URL) if settings.METRICS_CACHE_S > 0 else None
    locked = False
    if client is not None:
        try:
            fresh, last = client.mget(key, _last(key))
            if fresh is not None:
                return fresh
            locked = bool(client.set(_lock(key), b"1", nx=True, px=int(RENDERING_LOCK_S * 1000)))
            if last is not None:
                if locked:
                    _render_in_background(client, key, partitions)
                return last
        except redis.RedisError as exc:
            redis_failed(exc)
            client = None
    text = None
    try:
        text = _render(partitions)
        return text
    finally:
        if client is not None:
            _keep(client, key, text, unlock=locked)


def _render_in_background(client: redis.Redis, key: str, partitions: bool) -> None:
    """Renders and shares the next text in a thread, then lets go of the lock this process took for it."""

    def run() -> None:
        text = None
        try:
            text = _render(partitions)
        except Exception as exc:  # noqa: BLE001 - the next expiry tries again; a thread must not die silently
            log.warning("Rendering /metrics failed: %s", exc)
        finally:
            _keep(client, key, text, unlock=True)
            connection.close()  # this thread's own database connection

    threading.Thread(target=run, name="metrics-rendering", daemon=True).start()


def _keep(client: redis.Redis, key: str, text: bytes | None, *, unlock: bool) -> None:
    """Shares the rendering (None: it failed) and lets go of the lock on rendering, when this process held it."""
    try:
        pipe = client.pipeline(transaction=False)
        if text is not None:
            pipe.set(key, text, px=int(settings.METRICS_CACHE_S * 1000))
            pipe.set(_last(key), text, px=int(max(LAST_RENDERING_KEPT_S, settings.METRICS_CACHE_S) * 1000))
        if unlock:
            pipe.delete(_lock(key))
        pipe.execute()
    except redis.RedisError as exc:
        redis_failed(exc)


def _last(key: str) -> str:
    return f"{key}:last"


def _lock(key: str) -> str:
    return f"{key}:rendering"


def _render(partitions: bool) -> bytes:
    # A registry per scrape: the collector's options come from the request, and the process-wide default
    # registry would add this web worker's own process metrics, which say nothing about Kafka.
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ConsoleCollector(partitions=partitions))
    return generate_latest(registry)
