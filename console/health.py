"""Health for orchestrators and people: anonymous callers learn up or degraded and a few counts, people and scrapers
why.

- /health/live: the process serves requests (touches nothing).
- /health (also /health/ready): the console's own dependencies (database, Redis, a Celery worker) decide the
  status; every registered Kafka cluster's state is in the body but never turns the answer into 503, because
  one of twenty clusters being down must not take the console out of service.
- The audit witness (console/witness/) is reported from what the database stores (no Kafka call): "ok",
  "lagging" (events wait longer than AUDIT_WITNESS_LAG_ALERT_S to be published), "broken" (the publisher refused
  a row, or the last audit_verify found rows changed, missing or inserted) or "off". Like a cluster, it never
  turns the answer into 503: restarting the console would not repair an audit log.
- The processes `make run` supervises (devstack/keep_running.py: kafka, redis, registry, worker, beat,
  recorder, web), from their status files on this host: whether each is failing, and for people its state and last
  error. Absent in production (no keep_running); never 503, since Redis and the worker count already do that.
- The console's private files (console/private_files.py): whether the database and the folders it writes are open
  to other users of the host. Never 503 (a restart does not fix a mode), and only people and the scraper see it.
- The memory of the console's processes on this host by kind (console/footprint.py: web, worker, recorder, each
  cluster's client processes, the Java Admin JVM), from /proc: what each registered cluster costs. People only.
- Anonymous callers (load balancers, orchestrators, anyone who reaches the port) get the status, up or down per
  dependency, the witness's state word and counts: how many clusters and supervised processes, how many of them are
  down. No cluster or process names (they map the network), and no Kafka call or Celery ping of their own: their
  answer is a snapshot at most HEALTH_ANONYMOUS_CACHE_S old, made by one caller at a time. Error texts, names and
  versions go only to logged-in users and to callers presenting the metrics token (`Authorization: Bearer ...`),
  who get a fresh answer.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import redis
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET

from console.witness.status import witness_status
from console.clusters.local_processes import supervised_processes
from console.clusters.models import Cluster
from console.clusters.selectors import clusters_health
from console.footprint import memory_report
from console.process_status import ProcessStatus
from console.metrics.views import bearer_matches
from console.private_files import open_paths
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


def private_files_state() -> dict:
    """Whether the database file and the folders the console writes give other users any access."""
    found = open_paths(private_paths())
    return {"ok": not found, "open": [p.as_json() for p in found]}


def private_paths() -> list[str]:
    database = settings.DATABASES["default"]
    paths = [settings.REPLAY_OUTPUT_DIR, settings.PROCESS_STATUS_DIR, settings.KAFKA_CLIENT_SOCKET_DIR]
    if database["ENGINE"] == "django.db.backends.sqlite3" and str(database["NAME"]) != ":memory:":
        # its folder too: SQLite writes its journal beside it, and the dev stack keeps Kafka's data there
        paths = [str(database["NAME"]), str(Path(database["NAME"]).parent), *paths]
    return paths


def health_details() -> tuple[dict, bool]:
    """(the full answer, whether the console's own dependencies are up): a DescribeCluster to every cluster at
    once, a Redis ping, a Celery ping."""
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
    body = {"status": "ok" if ok else "degraded", "database": db, "redis": redis_info, "celery": celery,
            "kafka": clusters, "kafka_summary": {"clusters": len(clusters), "unreachable": down},
            "audit_witness": witness_status().as_json() if db["ok"] else None,
            "processes": {name: _process_details(status) for name, status in supervised_processes().items()},
            "files": private_files_state(), "memory": memory_report()}
    return body, ok


def anonymous_view(body: dict) -> dict:
    """Up or down and counts: no names of clusters or processes, no error texts, numbers or versions."""
    witness = body["audit_witness"]
    processes = body["processes"].values()
    return {"status": body["status"], **{part: {"ok": body[part]["ok"]} for part in ("database", "redis", "celery")},
            "kafka": {"clusters": len(body["kafka"]), "unreachable": len(body["kafka_summary"]["unreachable"])},
            "audit_witness": {"state": witness["state"]} if witness else None,
            "processes": {"supervised": len(processes), "failing": sum(1 for p in processes if not p["ok"])}}


class _Snapshot:
    """The newest full answer, shared by the anonymous callers of this process: at most one of them at a time
    makes a new one, the others wait for it (or take the one just made)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.made_at = float("-inf")
        self.answer: tuple[dict, bool] | None = None

    def keep(self, answer: tuple[dict, bool]) -> None:
        self.answer, self.made_at = answer, time.monotonic()

    def fresh(self) -> tuple[dict, bool] | None:
        if self.answer is not None and time.monotonic() - self.made_at < settings.HEALTH_ANONYMOUS_CACHE_S:
            return self.answer
        return None

    def get(self) -> tuple[dict, bool]:
        """The snapshot, made anew when it is too old; while another caller makes it, the older one if there is one
        (an anonymous caller never waits for a hanging cluster twice)."""
        if not self.lock.acquire(blocking=self.answer is None):
            return self.answer
        try:
            answer = self.fresh()
            if answer is None:
                answer = health_details()
                self.keep(answer)
            return answer
        finally:
            self.lock.release()

    def forget(self) -> None:
        self.answer, self.made_at = None, float("-inf")


snapshot = _Snapshot()


@login_not_required
@require_GET
def health(request):
    if _may_see_details(request):
        body, ok = health_details()
        snapshot.keep((body, ok))
    else:
        body, ok = snapshot.get()
        body = anonymous_view(body)
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
