"""console/redis_retry.py: a refused login or connection is not retried, other connection errors are (unit);
against the session's Redis a wrong password costs one connection, not redis-py's eleven, and a port nobody listens
on answers at once."""

from __future__ import annotations

import socket
import time

import pytest
import redis

from devstack.redis import redis_url
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


def _refused() -> redis.ConnectionError:
    """What redis-py raises for a port nobody listens on: its own error, raised while handling the socket's."""
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError:
            raise redis.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")
    except redis.ConnectionError as error:
        return error


def test_a_refused_connection_is_raised_at_once():
    failures = []
    with pytest.raises(redis.ConnectionError):
        console_retry().call_with_retry(_failing([_refused()]),
                                        failures.append)
    assert failures == []


def test_a_redis_that_is_down_answers_at_once():
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: connections to it are refused
        client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5, retry=console_retry())
        started = time.monotonic()
        with pytest.raises(redis.ConnectionError, match="refused"):
            client.ping()
        assert time.monotonic() - started < 1.0  # redis-py's own policy took about 4 s


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
