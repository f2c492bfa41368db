"""Health for orchestrators and people: anonymous callers learn up or down, people and scrapers why.

- /health/live: the process serves requests (touches nothing).
- /health (also /health/ready): the console's own dependencies (database, Redis, a Celery worker) decide the
  status; every registered Kafka cluster's state is in the body but never turns the answer into 503, because
  one of twenty clusters being down must not take the console out of service.
- The audit witness (console/audit/witness/) is reported from what the database stores (no Kafka call): "ok",
  "lagging" (events wait longer than AUDIT_WITNESS_LAG_ALERT_S to be published), "broken" (the publisher refused
  a row, or the last audit_verify found rows changed, missing or inserted) or "off". Like a cluster, it never
  turns the answer into 503: restarting the console would not repair an audit log.
- The processes `make run` supervises (console/devstack/keep_running.py: kafka, redis, registry, worker, beat,
  recorder, web), from their status files on this host: whether each is failing, and for people its state and last
  error. Absent in production (no keep_running); never 503, since Redis and the worker count already do that.
- Anonymous callers (load balancers, orchestrators) get up/down per component and the witness's state word only.
  Error texts name broker hosts and ports, and counts and versions help whoever maps the network, so the details
  go only to logged-in users and to callers presenting the metrics token (`Authorization: Bearer ...`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import redis
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET

from console.audit.witness.status import witness_status
from console.clusters.local_processes import supervised_processes
from console.clusters.models import Cluster
from console.clusters.selectors import clusters_health
from console.devstack.process_status import ProcessStatus
from console.metrics.views import bearer_matches
from console.redis_retry import console_retry


def database_state() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return {"ok": True, "vendor": connection.vendor}
    except Exception as exc:  # any driver error means "down"
        return {"ok": False, "error": type(exc).__name__}


def redis_state() -> dict:
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1,
                                      retry=console_retry())
        client.ping()
        return {"ok": True}
    except redis.RedisError as exc:
        return {"ok": False, "error": type(exc).__name__}


def celery_state(redis_ok: bool) -> dict:
    if not redis_ok:
        return {"ok": False, "workers": 0, "error": "broker (Redis) down"}
    from console.celery import app

    try:
        replies = app.control.ping(timeout=1.0) or []
    except Exception as exc:  # kombu raises several connection error types
        return {"ok": False, "workers": 0, "error": type(exc).__name__}
    return {"ok": bool(replies), "workers": len(replies)}


@login_not_required
@require_GET
def health_live(request):
    return JsonResponse({"status": "alive"})


@login_not_required
@require_GET
def health(request):
    db = database_state()
    registered = list(Cluster.objects.all()) if db["ok"] else []
    with ThreadPoolExecutor(max_workers=2) as pool:
        clusters_future = pool.submit(clusters_health, registered)
        redis_future = pool.submit(redis_state)
        redis_info = redis_future.result()
        clusters = {c.name: c.as_json() for c in clusters_future.result()}
    celery = celery_state(redis_info["ok"])
    ok = db["ok"] and redis_info["ok"] and celery["ok"]
    down = sorted(name for name, c in clusters.items() if not c["reachable"])
    witness = witness_status().as_json() if db["ok"] else None
    processes = {name: _process_details(status) for name, status in supervised_processes().items()}
    if not _may_see_details(request):
        db, redis_info, celery = ({"ok": part["ok"]} for part in (db, redis_info, celery))
        clusters = {name: {"reachable": c["reachable"]} for name, c in clusters.items()}
        witness = {"state": witness["state"]} if witness else None
        processes = {name: {"ok": p["ok"]} for name, p in processes.items()}
    body = {"status": "ok" if ok else "degraded", "database": db, "redis": redis_info, "celery": celery,
            "kafka": clusters, "kafka_summary": {"clusters": len(clusters), "unreachable": down},
            "audit_witness": witness, "processes": processes}
    return JsonResponse(body, status=200 if ok else 503)


def _process_details(status: ProcessStatus) -> dict:
    return {"ok": not status.failing, "state": status.state, "since": status.since, "failures": status.failures,
            "last_exit": status.last_exit or None, "last_error": status.last_error or None,
            "output_tail": status.output_tail}


def _may_see_details(request) -> bool:
    if request.user.is_authenticated:
        return True
    token = settings.METRICS_TOKEN
    return bool(token) and bearer_matches(request.headers.get("Authorization", ""), token)
