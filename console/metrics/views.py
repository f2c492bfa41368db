"""/metrics: off (404) unless CONSOLE_METRICS_TOKEN is set; then a scraper sends it as a bearer token."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET
import redis
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from console.http import HtmxHttpRequest
from console.metrics.collector import ConsoleCollector
from console.shared_table_stores import redis_client, redis_failed

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


def exposition(partitions: bool) -> bytes:
    """The scrape's text, shared by every web process for METRICS_CACHE_S seconds: at 50,000 groups writing it
    takes most of a second of a web worker, and the figures behind it change once per lag sweep (30 s), so
    scrapers close together (an HA pair of Prometheus servers, several dashboards) are served one rendering."""
    key = f"console:metrics:exposition:{int(partitions)}"
    client = redis_client(settings.REDIS_URL) if settings.METRICS_CACHE_S > 0 else None
    if client is not None:
        try:
            cached = client.get(key)
            if cached is not None:
                return cached
        except redis.RedisError as exc:
            redis_failed(exc)
            client = None
    # A registry per scrape: the collector's options come from the request, and the process-wide default
    # registry would add this web worker's own process metrics, which say nothing about Kafka.
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ConsoleCollector(partitions=partitions))
    text = generate_latest(registry)
    if client is not None:
        try:
            client.set(key, text, px=int(settings.METRICS_CACHE_S * 1000))
        except redis.RedisError as exc:
            redis_failed(exc)
    return text
