"""/metrics: off (404) unless CONSOLE_METRICS_TOKEN is set; then a scraper sends it as a bearer token."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from console.http import HtmxHttpRequest
from console.metrics.collector import ConsoleCollector

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
    # A registry per scrape: the collector's options come from the request, and the process-wide default
    # registry would add this web worker's own process metrics, which say nothing about Kafka.
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ConsoleCollector(partitions=request.GET.get("partitions") in ("1", "true")))
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
