"""The Prometheus reader's pure parts: which addresses may reach the HTTP client, how the exporter's series are named
back as MBeans, and how Prometheus's instances are matched to brokers; and its HTTP against small real servers of the
test's own that misbehave as a hostile Prometheus would (drip bytes, answer without end, redirect elsewhere)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.kafka.broker_mbeans import reading_from_attributes
from gateway.kafka.errors import InvalidRequest
from gateway.kafka.prometheus import (MAX_BODY, MSG_REDIRECT_AWAY, MSG_TOO_BIG, _wanted_index, check_prometheus_url,
                                      instance_brokers, object_name, queries, read_prometheus)
from gateway.kafka.types import JMX_CREDENTIALS, JMX_FAILED, JMX_TIMEOUT, JmxEndpoint


@pytest.mark.parametrize("url", ["http://127.0.0.1:9090", "https://prometheus.example.com/", "http://[::1]:9090",
                                 "https://metrics.internal:443/prometheus/eu-1"])
def test_a_plain_address_is_taken(url):
    assert check_prometheus_url(url) == url.rstrip("/")


@pytest.mark.parametrize("url", ["", "ftp://host", "file:///etc/passwd", "http://user:pw@host:9090",
                                 "http://host:9090/?query=up", "http://host:9090/#x", "http://host:0",
                                 "http://host:70000", "http://ho st", "http://host/a b", "http://host/%2e%2e",
                                 "javascript:alert(1)", "http://host\n.evil", "http://-host"])
def test_anything_else_is_refused_before_a_request(url):
    with pytest.raises(InvalidRequest, match="A Prometheus address is"):
        check_prometheus_url(url)


@given(st.text(max_size=80))
def test_no_typed_text_brings_a_user_query_or_odd_character_to_urllib(text):
    try:
        url = check_prometheus_url(text)
    except InvalidRequest:
        return
    assert url.startswith(("http://", "https://"))
    assert not set(url) & set("@?#%\\\"' \t\r\n<>{}|^`")


def _series(metric, **labels):
    return {"__name__": metric, "instance": "127.0.0.1:7071", "job": "kafka", **labels}


def test_the_exporters_series_are_named_back_as_their_mbeans():
    index = _wanted_index(True)
    assert object_name(_series("kafka_server_BrokerTopicMetrics_Count", name="BytesInPerSec"), index) == (
        "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec", "Count")
    assert object_name(_series("kafka_server_BrokerTopicMetrics_OneMinuteRate", name="BytesInPerSec",
                               topic="orders.v1"), index) == (
        "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=orders.v1", "OneMinuteRate")
    assert object_name(_series("kafka_network_RequestMetrics_Count", name="RequestsPerSec", request="Produce",
                               version="11"), index) == (
        "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,version=11", "Count")
    assert object_name(_series("kafka_controller_KafkaController_Value", name="ActiveControllerCount"), index) == (
        "kafka.controller:type=KafkaController,name=ActiveControllerCount", "Value")
    # what was not asked for, or cannot be a topic's name, is left out
    assert object_name(_series("kafka_server_BrokerTopicMetrics_Count", name="TotalFetchRequestsPerSec"), index) is None
    assert object_name(_series("kafka_server_BrokerTopicMetrics_Count", name="BytesInPerSec", topic="a,b=c"),
                       index) is None
    assert object_name(_series("kafka_network_RequestMetrics_Count", name="RequestsPerSec", request="Metadata",
                               version="12"), index) is None
    assert object_name(_series("jvm_memory_bytes_used", area="heap"), index) is None
    assert object_name(_series("kafka_server_BrokerTopicMetrics_Count", name="BytesInPerSec", topic="t"),
                       _wanted_index(False)) is None


def test_named_back_series_make_the_same_reading_as_jmx_would():
    found = {"kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec": {"Count": 1000.0, "OneMinuteRate": 12.5},
             "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,version=11": {"Count": 3.0,
                                                                                                   "OneMinuteRate": 1.0},
             "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,version=12": {"Count": 4.0,
                                                                                                   "OneMinuteRate": 2.0},
             "kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent": {"OneMinuteRate": 0.97},
             "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t1": {"Count": 9.0}}
    reading = reading_from_attributes(1, "h:1", 0.0, 0.0, found)
    assert reading.meters["bytes_in"].count == 1000 and reading.meters["produce_requests"].count == 7
    assert reading.meters["produce_requests"].one_minute_rate == 3.0
    assert reading.gauges["request_idle_pct"] == pytest.approx(97.0)
    assert reading.topics["t1"]["messages_in"].count == 9


def test_instances_are_matched_by_address_then_by_a_port_only_one_has():
    one, two = JmxEndpoint(1, "kafka-1.example", 7071), JmxEndpoint(2, "127.0.0.1", 7072)
    assert instance_brokers({"kafka-1.example:7071", "10.0.0.2:7072"}, [one, two]) == {
        "kafka-1.example:7071": one, "10.0.0.2:7072": two}
    # the same port on two hosts: only the exact address may stand for a broker
    assert instance_brokers({"10.0.0.1:7071", "10.0.0.9:7071"}, [one]) == {}
    v6 = JmxEndpoint(3, "::1", 7073)
    assert instance_brokers({"[::1]:7073"}, [v6]) == {"[::1]:7073": v6}


def test_three_queries_whatever_the_number_of_brokers_each_limited_to_their_ports():
    targets = [JmxEndpoint(i, f"b{i}.example", 7070 + i) for i in range(1, 31)]
    asked = queries(targets, topics=True)
    assert set(asked) == {"brokers", "topics", "up"}
    assert 'instance=~".+:(7071|' in asked["up"] and "7100" in asked["up"]
    assert 'topic=""' in asked["brokers"] and 'topic!=""' in asked["topics"]
    assert set(queries(targets, topics=False)) == {"brokers", "up"}


EXPORTER = JmxEndpoint(1, "127.0.0.1", 7071)
UP = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
    {"metric": {"__name__": "up", "instance": "127.0.0.1:7071"}, "value": [1700000000.0, "1"]}]}}).encode()


class _Recorded(BaseHTTPRequestHandler):
    """Answers by path (server.routes: path -> (status, headers, body)) and keeps each request's path and headers."""

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.seen.append((self.path, dict(self.headers)))
        status, headers, body = self.server.routes.get(self.path, (404, {}, b"{}"))
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST  # noqa: N815 - a client that turned the POST into a GET on a redirect is seen too

    def log_message(self, *args):
        pass


@pytest.fixture
def http_server():
    """start(host) -> a real HTTP server on `host` (a port of its own) that answers server.routes."""
    started = []

    def start(host: str = "127.0.0.1") -> ThreadingHTTPServer:
        server = ThreadingHTTPServer((host, 0), _Recorded)
        server.seen, server.routes = [], {}
        server.url = f"http://{host}:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


@pytest.fixture
def raw_server():
    """serve(answer) -> the address of a TCP server that reads a request and then calls answer(connection)."""
    listeners, stop = [], threading.Event()

    def serve(answer) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(0.2)
        listeners.append(listener)

        def loop():
            while not stop.is_set():
                try:
                    connection, _ = listener.accept()
                except OSError:
                    continue
                connection.recv(65536)
                threading.Thread(target=_answer, args=(answer, connection), daemon=True).start()

        threading.Thread(target=loop, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}"

    def _answer(answer, connection):
        try:
            answer(connection, stop)
        except OSError:
            pass
        finally:
            connection.close()

    yield serve
    stop.set()
    for listener in listeners:
        listener.close()


def _drip(prefix: bytes):
    def answer(connection, stop):
        connection.sendall(prefix)
        while not stop.wait(0.1):
            connection.sendall(b" ")
    return answer


@pytest.mark.parametrize("prefix", [b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n{", b"HTTP/1.1 200 OK\r\nX-A:"],
                         ids=["in the body", "in the headers"])
def test_a_server_dripping_bytes_is_cut_at_the_calls_deadline(raw_server, prefix):
    url = raw_server(_drip(prefix))
    began = time.monotonic()
    reading = read_prometheus(url, [EXPORTER], timeout=1.0, username="console", password="pw")[0]
    took = time.monotonic() - began
    assert reading.error_kind == JMX_TIMEOUT and "did not answer within 1.0 s" in reading.error
    assert took < 1.8, took  # a byte every 0.1 s would have kept a per-read timeout waiting for a megabyte


def test_an_answer_past_the_cap_is_refused_declared_or_not(raw_server, http_server):
    huge = http_server()
    huge.routes["/api/v1/query"] = (200, {"Content-Type": "application/json"}, b"[" + b"0," * (MAX_BODY // 2) + b"0]")
    reading = read_prometheus(huge.url, [EXPORTER], timeout=10.0)[0]
    assert reading.error_kind == JMX_FAILED
    assert reading.error == MSG_TOO_BIG.format(url=huge.url, mib=MAX_BODY >> 20)

    def endless(connection, stop):  # no length: the body ends when the connection does, which this one never would
        connection.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
        chunk = b"0," * 32768
        while not stop.is_set():
            connection.sendall(chunk)

    url = raw_server(endless)
    began = time.monotonic()
    reading = read_prometheus(url, [EXPORTER], timeout=10.0)[0]
    assert reading.error == MSG_TOO_BIG.format(url=url, mib=MAX_BODY >> 20)
    assert time.monotonic() - began < 5


def test_a_redirect_to_another_host_gets_nothing_and_one_on_the_same_server_keeps_working(http_server):
    elsewhere = http_server("127.0.0.2")  # loopback too, but another host to a client
    elsewhere.routes["/api/v1/query"] = (200, {}, UP)
    registered = http_server()
    registered.routes["/api/v1/query"] = (302, {"Location": f"{elsewhere.url}/api/v1/query"}, b"")

    reading = read_prometheus(registered.url, [EXPORTER], username="console", password="s3cret")[0]

    assert reading.error == MSG_REDIRECT_AWAY.format(url=registered.url, where=f"{elsewhere.url}/api/v1/query")
    assert elsewhere.seen == [] and len(registered.seen) == 1
    assert registered.seen[0][1]["Authorization"].startswith("Basic ")
    # The other server takes credentials when it is the one registered: that the test's server records them.
    read_prometheus(elsewhere.url, [EXPORTER], username="console", password="s3cret")
    assert elsewhere.seen and all("Authorization" in headers for _, headers in elsewhere.seen)

    # Behind a path prefix on the same server: followed, with the credentials, to an answer.
    registered.seen.clear()
    registered.routes["/api/v1/query"] = (308, {"Location": "/prometheus/api/v1/query"}, b"")
    registered.routes["/prometheus/api/v1/query"] = (401, {}, b"{}")
    refused = read_prometheus(registered.url, [EXPORTER], username="console", password="wrong")[0]
    assert refused.error_kind == JMX_CREDENTIALS
    assert [path for path, _ in registered.seen] == ["/api/v1/query", "/prometheus/api/v1/query"]
    assert all("Authorization" in headers for _, headers in registered.seen)
