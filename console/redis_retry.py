"""The retry policy of the console's own Redis clients.

redis-py retries a failed command up to ten times with a growing pause, and takes a refused login for a connection
error like any other (AuthenticationError is a ConnectionError): with a wrong REDIS_PASSWORD each page that read a
shared table, and /health, waited about 4 s to learn what the first answer had said. A refused login is not
retried; everything else is, as redis-py would (a pooled connection that went stale across a Redis restart, say).
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
            if isinstance(error, redis.AuthenticationError):
                return False
            return is_retryable is None or is_retryable(error)

        return super().call_with_retry(do, fail, retryable, with_failure_count)


def console_retry() -> Retry:
    return RefusalNotRetried(ExponentialWithJitterBackoff(base=BACKOFF_BASE_S, cap=BACKOFF_CAP_S), RETRIES)
