"""The retry policy of the console's own Redis clients.

redis-py retries a failed command up to ten times with a growing pause, and takes a refused login for a connection
error like any other (AuthenticationError is a ConnectionError): with a wrong REDIS_PASSWORD each page that read a
shared table, and /health, waited about 4 s to learn what the first answer had said. A Redis that is down (the
connection refused) cost a page the same 4 s. Neither is retried: the shared tables fall back to the process's own
snapshots at once and /health says Redis is down. Everything else is retried, as redis-py would (a pooled
connection that went stale across a Redis restart, say).
"""

from __future__ import annotations

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.retry import Retry

# redis-py 8's own defaults for Redis(): ten retries, pauses from 10 ms up to 1 s.
RETRIES = 10
BACKOFF_BASE_S, BACKOFF_CAP_S = 0.01, 1.0


class RefusalNotRetried(Retry):
    def call_with_retry(self, do, fail, is_retryable=None, with_failure_count=False):
        def retryable(error: Exception) -> bool:
            if isinstance(error, redis.AuthenticationError) or _refused(error):
                return False
            return is_retryable is None or is_retryable(error)

        return super().call_with_retry(do, fail, retryable, with_failure_count)


def _refused(error: BaseException) -> bool:
    """Whether nothing listens there: redis-py raises its own ConnectionError while handling the socket's."""
    seen = 0
    while error is not None and seen < 5:
        if isinstance(error, ConnectionRefusedError):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def console_retry() -> Retry:
    return RefusalNotRetried(ExponentialWithJitterBackoff(base=BACKOFF_BASE_S, cap=BACKOFF_CAP_S), RETRIES)
