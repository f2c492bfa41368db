"""The console's Redis (the Celery broker) answers only callers with its password, which no other user of the
host can read: neither from the configuration file nor from the process list."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from devstack.kafka import free_ports
from console.paths import PROJECT_DIR
from devstack.redis import redis_url


def _refuses_strangers(port: int, password: str) -> None:
    # redis-py takes a refused login for a connection error and tries again three times with a growing pause
    # (about 4 s): the refusal is the point here, not the client's patience.
    once = Retry(NoBackoff(), 0)
    stranger = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=2, retry=once)
    with pytest.raises((redis.AuthenticationError, redis.ResponseError)):
        stranger.set("queued-by-someone-else", "x")
    with pytest.raises((redis.AuthenticationError, redis.ResponseError)):
        redis.Redis(host="127.0.0.1", port=port, password="guess", retry=once).ping()
    assert redis.Redis.from_url(redis_url(port, password)).ping()


def _private(path) -> bool:
    return stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_the_session_redis_asks_for_its_password(redis_node):
    _refuses_strangers(redis_node.port, redis_node.password)
    assert _private(redis_node.config_file)
    assert redis_node.password.encode() not in open(f"/proc/{redis_node.process.pid}/cmdline", "rb").read()


def test_the_redis_make_run_starts_asks_for_the_password_from_its_environment(tmp_path):
    port, password = free_ports(1)[0], "p@ss/w:rd?" + os.urandom(6).hex()
    process = subprocess.Popen([sys.executable, "-m", "devstack.redis", "run", "--home", str(tmp_path),
                                "--port", str(port)], cwd=PROJECT_DIR, env={**os.environ, "REDIS_PASSWORD": password},
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(redis_url(port, password), socket_connect_timeout=0.5).ping()
                break
            except redis.ConnectionError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        _refuses_strangers(port, password)
        assert _private(tmp_path / "redis.conf")
        assert password.encode() not in open(f"/proc/{process.pid}/cmdline", "rb").read()
    finally:
        process.terminate()
        process.wait(10)


def test_without_a_password_it_does_not_start_open(tmp_path):
    environment = {k: v for k, v in os.environ.items() if k != "REDIS_PASSWORD"}
    done = subprocess.run([sys.executable, "-m", "devstack.redis", "run", "--home", str(tmp_path),
                           "--port", str(free_ports(1)[0])], cwd=PROJECT_DIR, env=environment, capture_output=True,
                          text=True, timeout=30)
    assert done.returncode != 0 and "REDIS_PASSWORD is not set" in done.stderr
