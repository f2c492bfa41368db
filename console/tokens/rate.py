"""Calls per token and minute, counted in Redis so every web process shares one count; while Redis does not
answer, each process counts on its own (the bound then holds per process, still a bound)."""

from __future__ import annotations

import threading
import time

import redis
from django.conf import settings

from console.shared_table_stores import redis_client, redis_failed

WINDOW_S = 60
_local: dict[tuple[str, int], int] = {}  # (token, window) -> calls: only the current window is kept
_local_lock = threading.Lock()


def _key(token: str, window: int) -> str:
    return f"console:api-rate:{token}:{window}"


def _count_locally(token: str, window: int) -> int:
    with _local_lock:
        for key in [key for key in _local if key[1] != window]:
            del _local[key]
        _local[(token, window)] = _local.get((token, window), 0) + 1
        return _local[(token, window)]


def rate_wait_s(token: str, *, now: float | None = None) -> int:
    """Counts this call of `token` (a part of its digest: a row id could be reused by another token); 0 when it is
    within API_RATE_LIMIT_PER_MINUTE, else the seconds until the next minute."""
    now = time.time() if now is None else now
    window = int(now // WINDOW_S)
    client = redis_client(settings.REDIS_URL)
    calls = None
    if client is not None:
        try:
            pipe = client.pipeline()
            pipe.incr(_key(token, window))
            pipe.expire(_key(token, window), 2 * WINDOW_S)
            calls = int(pipe.execute()[0])
        except redis.RedisError as exc:
            redis_failed(exc)
    if calls is None:
        calls = _count_locally(token, window)
    if calls <= settings.API_RATE_LIMIT_PER_MINUTE:
        return 0
    return max(1, int((window + 1) * WINDOW_S - now))
