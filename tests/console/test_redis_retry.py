"""console/redis_retry.py: a refused login is not retried, other connection errors are (unit), and against the
session's Redis a wrong password costs one connection, not redis-py's eleven."""

from __future__ import annotations

import pytest
import redis

from console.devstack.redis import redis_url
from console.redis_retry import console_retry


def _failing(errors: list[Exception]):
    def do():
        if errors:
            raise errors.pop(0)
        return "answered"
    return do


def test_a_refused_login_is_raised_at_once():
    failures = []
    with pytest.raises(redis.AuthenticationError):
        console_retry().call_with_retry(_failing([redis.AuthenticationError("invalid password")]), failures.append)
    assert failures == []


def test_a_dropped_connection_is_still_retried():
    failures = []
    errors = [redis.ConnectionError("Connection reset by peer"), redis.TimeoutError("Timeout reading")]
    assert console_retry().call_with_retry(_failing(errors), failures.append) == "answered"
    assert [type(f) for f in failures] == [redis.ConnectionError, redis.TimeoutError]


def test_the_callers_own_rule_still_applies():
    with pytest.raises(redis.ConnectionError):
        console_retry().call_with_retry(_failing([redis.ConnectionError("x")]), lambda error: None,
                                        is_retryable=lambda error: False)


def test_a_wrong_password_costs_the_session_redis_one_connection(redis_node):
    watcher = redis.Redis.from_url(redis_url(redis_node.port, redis_node.password))
    before = watcher.info("stats")["total_connections_received"]
    stranger = redis.Redis(host="127.0.0.1", port=redis_node.port, password="wrong", retry=console_retry())
    with pytest.raises(redis.AuthenticationError):
        stranger.ping()
    assert watcher.info("stats")["total_connections_received"] - before == 1
