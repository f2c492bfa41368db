"""gateway/kafka_connect: the REST gateway against the session's real worker, hostile names included, and its bounds
when a worker is down or frozen."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
import uuid

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from gateway.kafka_connect import ConnectClient, ConnectEndpoint, forget_unreachable
from gateway.kafka_connect.errors import ConnectAuthFailed, ConnectNotFound, ConnectRefused, ConnectUnavailable
from gateway.kafka_connect.transport import path
from tests.fixtures.connect import CONNECT_PASSWORD_ENV, CONNECT_USER

SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
# Every character Connect accepts in a name and its REST server (Jetty 12) accepts in a path segment.
HOSTILE = ["orders sink #1", "semi;colon", "+plus", 'quote"d \'name\'', "<b>markup<i>&amp;", "Ünïcødé ☃ 名前", "a?b=c&d", "..x",
           "tilde~7E"]


@given(st.text(min_size=1, max_size=40))
@hsettings(max_examples=200, deadline=None)
def test_every_name_stays_one_path_segment(name):
    from urllib.parse import unquote

    encoded = path("connectors", name, "status")
    segments = encoded.split("/")
    assert len(segments) == 4 and unquote(segments[2]) == name
    assert all(ch not in segments[2] for ch in "/?#% " if ch != "%") and segments[2].isascii()


def client_for(worker, **overrides) -> ConnectClient:
    fields = {"name": "local", "url": worker.url, "username": CONNECT_USER,
              "password": os.environ[CONNECT_PASSWORD_ENV], "timeout": 5.0, "write_timeout": 20.0,
              "unreachable_backoff": 0.0}
    return ConnectClient(ConnectEndpoint(**{**fields, **overrides}))


@pytest.fixture
def client(connect_worker, connect_rest):
    forget_unreachable()
    yield client_for(connect_worker)
    connect_rest.delete_all()


@pytest.mark.kafka
def test_hostile_names_round_trip_through_every_endpoint(client, connect_rest, topic_factory, tmp_path):
    topic = topic_factory("hostile")
    # Every name goes through each step before the next step starts: the same calls, without waiting on Connect
    # name after name.
    for name in HOSTILE:
        config = {"connector.class": SINK, "topics": topic, "file": str(tmp_path / f"{uuid.uuid4().hex}.txt")}
        info = client.create(name, config)
        assert info.name == name and info.type == "sink"
        assert client.connector(name).config["file"] == config["file"]
    for name in HOSTILE:
        connect_rest.wait_state(name, "RUNNING")  # Connect has no status for a connector it has not started yet
        assert client.status(name).name == name
        assert name in client.connectors() and name in client.connector_names()
        client.pause(name)
    for name in HOSTILE:
        connect_rest.wait_state(name, "PAUSED")
        client.stop(name)
    for name in HOSTILE:
        connect_rest.wait_state(name, "STOPPED")
        assert client.offsets(name).entries == ()
        client.resume(name)
    for name in HOSTILE:
        connect_rest.wait_state(name, "RUNNING")
        client.restart(name, include_tasks=True)
        client.delete(name)
    for name in HOSTILE:
        with pytest.raises(ConnectNotFound):
            client.connector(name)


@pytest.mark.kafka
@pytest.mark.parametrize("name", ["team/orders", "50% off", "back\\slash"])
def test_a_connector_whose_name_jetty_refuses_in_a_path_is_explained(client, connect_rest, topic_factory, name):
    """Connect creates it (the name travels in the body), then no path reaches it: the gateway says why."""
    status, _ = connect_rest("POST", "connectors", body={"name": name, "config": {
        "connector.class": SINK, "topics": topic_factory("slash"), "file": "/tmp/x"}})
    assert status == 201
    with pytest.raises(ConnectRefused) as caught:
        client.connector(name)
    assert "Connect's REST server (Jetty) refuses a path holding an encoded '%'" in caught.value.message
    assert "Error 400" in caught.value.message


@pytest.mark.kafka
def test_validation_names_each_bad_setting(client):
    validation = client.validate(SINK, {"connector.class": SINK, "name": "v", "tasks.max": "zero"})
    assert validation.error_count >= 2
    assert "tasks.max" in validation.errors
    assert any("topics" in key for key in validation.errors) or any(
        "topics" in message for messages in validation.errors.values() for message in messages)


@pytest.mark.kafka
def test_wrong_credentials_are_said_to_be_refused(connect_worker):
    with pytest.raises(ConnectAuthFailed) as caught:
        client_for(connect_worker, password="wrong").connector_names()
    assert "refused the console's credentials (HTTP 401)" in caught.value.message


def test_a_worker_that_is_down_answers_within_the_timeout():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(ConnectUnavailable) as caught:
        ConnectClient(ConnectEndpoint(name="gone", url=f"http://127.0.0.1:{port}", timeout=2.0,
                                      unreachable_backoff=0)).connector_names()
    assert time.monotonic() - started < 2.5
    assert "Kafka Connect 'gone'" in caught.value.message and caught.value.status == 503


def test_a_frozen_worker_answers_within_the_timeout_and_then_fails_fast():
    """A server that accepts connections and never answers, as a stopped (SIGSTOP) JVM does."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held = []
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
    endpoint = ConnectEndpoint(name="frozen", url=f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=1.5,
                               unreachable_backoff=30)
    try:
        started = time.monotonic()
        with pytest.raises(ConnectUnavailable):
            ConnectClient(endpoint).connectors_rest()
        assert 1.0 < time.monotonic() - started < 2.5
        started = time.monotonic()
        with pytest.raises(ConnectUnavailable) as caught:
            ConnectClient(endpoint).connectors_rest()
        assert time.monotonic() - started < 0.2 and "did not answer a moment ago" in caught.value.message
    finally:
        forget_unreachable()
        listener.close()


@pytest.mark.kafka
@pytest.mark.slow
def test_a_stopped_worker_process_answers_within_the_timeout(connect_worker):
    """The real worker frozen with SIGSTOP (as a long GC pause or a hung host would), then thawed."""
    client = client_for(connect_worker, timeout=2.0)
    os.kill(connect_worker.process.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(ConnectUnavailable):
            client.connectors_rest()
        assert time.monotonic() - started < 3.0
    finally:
        os.kill(connect_worker.process.pid, signal.SIGCONT)
    assert isinstance(client_for(connect_worker).connector_names(), list)


@pytest.mark.kafka
def test_the_https_listener_takes_the_client_certificate_and_refuses_without_one(connect_worker):
    tls = connect_worker.tls
    with_cert = client_for(connect_worker, url=connect_worker.https_url, ca_file=str(tls.ca),
                           cert_file=str(tls.client_cert), key_file=str(tls.client_key))
    assert isinstance(with_cert.connector_names(), list)
    for overrides in ({"cert_file": "", "key_file": ""},
                      {"cert_file": str(tls.untrusted_client_cert), "key_file": str(tls.untrusted_client_key)}):
        refused = client_for(connect_worker, url=connect_worker.https_url, ca_file=str(tls.ca), **overrides)
        with pytest.raises(ConnectAuthFailed, match="did not agree on TLS .*SSLV3_ALERT_(BAD_CERTIFICATE|CERTIFICATE_UNKNOWN)"):
            refused.connector_names()
    untrusting = client_for(connect_worker, url=connect_worker.https_url, cert_file=str(tls.client_cert),
                            key_file=str(tls.client_key))
    with pytest.raises(ConnectAuthFailed, match="did not agree on TLS .*CERTIFICATE_VERIFY_FAILED"):
        untrusting.connector_names()
