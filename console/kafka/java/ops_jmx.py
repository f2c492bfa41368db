"""Broker metrics over JMX, read through the console's JVM bridge (javax.management.remote over RMI).

Each broker's agent is asked in a thread of its own, so brokers are read side by side and a slow one costs its own
reading, not the others': whatever has not answered by the deadline is reported as slow and its thread left to
RMI's own time-outs (set on the bridge's JVM), and the next read of that broker is refused at once while it still
waits. Connections are kept per agent and dropped on any failure, so a sample costs a few RMI calls, not a login.
The MBeans read are fixed here; the only name a caller puts in one is a topic's, checked against Kafka's own rule.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from console.kafka.errors import InvalidRequest
from console.kafka.java import bridge
from console.kafka.types import GatewayFace
from console.kafka.types.metrics import (JMX_CREDENTIALS, JMX_FAILED, JMX_HOST, JMX_REFUSED, JMX_TIMEOUT, JMX_TLS,
                                         TOPIC_NAME, BrokerJmxReading, JmxEndpoint, MeterReading)

_TOPIC_METRICS = "kafka.server:type=BrokerTopicMetrics"
_REQUESTS = "kafka.network:type=RequestMetrics"
# key -> (object name, or a pattern whose matches are summed; kind). Kinds: meter (Count, OneMinuteRate), gauge
# (Value), p99 (99thPercentile, ms), idle (a meter whose one-minute rate is the idle share 0..1), share (a 0..1 gauge).
BROKER_MBEANS: dict[str, tuple[str, str]] = {
    "bytes_in": (f"{_TOPIC_METRICS},name=BytesInPerSec", "meter"),
    "bytes_out": (f"{_TOPIC_METRICS},name=BytesOutPerSec", "meter"),
    "messages_in": (f"{_TOPIC_METRICS},name=MessagesInPerSec", "meter"),
    # Kafka 4 keeps one RequestsPerSec meter per request version: the rate is their sum.
    "produce_requests": (f"{_REQUESTS},name=RequestsPerSec,request=Produce,*", "meter"),
    "fetch_requests": (f"{_REQUESTS},name=RequestsPerSec,request=FetchConsumer,*", "meter"),
    "isr_shrinks": ("kafka.server:type=ReplicaManager,name=IsrShrinksPerSec", "meter"),
    "isr_expands": ("kafka.server:type=ReplicaManager,name=IsrExpandsPerSec", "meter"),
    "produce_p99_ms": (f"{_REQUESTS},name=TotalTimeMs,request=Produce", "p99"),
    "fetch_p99_ms": (f"{_REQUESTS},name=TotalTimeMs,request=FetchConsumer", "p99"),
    "request_idle_pct": ("kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent", "idle"),
    "network_idle_pct": ("kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent", "share"),
    "under_replicated": ("kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", "gauge"),
    "under_min_isr": ("kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount", "gauge"),
    # On a KRaft controller only (every node of the dev clusters is one); absent elsewhere, never a made-up 0.
    "offline_partitions": ("kafka.controller:type=KafkaController,name=OfflinePartitionsCount", "gauge"),
    "active_controllers": ("kafka.controller:type=KafkaController,name=ActiveControllerCount", "gauge"),
}
TOPIC_MBEANS = {"bytes_in": "BytesInPerSec", "bytes_out": "BytesOutPerSec", "messages_in": "MessagesInPerSec"}
_ATTRIBUTES = {"meter": ("Count", "OneMinuteRate"), "idle": ("Count", "OneMinuteRate"), "gauge": ("Value",),
               "share": ("Value",), "p99": ("99thPercentile",)}
MAX_BROKERS_AT_ONCE = 16
MAX_TOPICS = 2000  # per broker and reading: past it the broker-wide figures still come, the rest of topics do not

_pool = ThreadPoolExecutor(max_workers=MAX_BROKERS_AT_ONCE, thread_name_prefix="jmx-read")
_lock = threading.Lock()
_connectors: dict[tuple, object] = {}  # (url, user, password, tls) -> a connected JMXConnector in the bridge's JVM
_waiting: set[tuple] = set()  # agents whose last read has not come back yet


def _key(endpoint: JmxEndpoint) -> tuple:
    # The bridge's pid: connections made in a JVM that has since been replaced are not reused.
    return endpoint.url, endpoint.username, endpoint.password, endpoint.tls, bridge.bridge_pid()


def check_endpoint(endpoint: JmxEndpoint) -> None:
    if not JMX_HOST.match(endpoint.host or "") or not 0 < endpoint.port < 65536:
        raise InvalidRequest(f"Not a JMX address: {endpoint.address!r} (a host name or IP address, and a port).")


class JmxOps(GatewayFace):
    def read_jmx(self, endpoints: list[JmxEndpoint], *, topics: bool = True,
                 timeout: float | None = None) -> list[BrokerJmxReading]:
        """Reads the broker and per-topic MBeans of each broker's JMX agent, all brokers at once, within `timeout`
        (the gateway's bound by default). A broker that is down, slow, or refuses the credentials gets a reading
        that says why instead of figures; the others are not held up by it."""
        for endpoint in endpoints:
            check_endpoint(endpoint)
        bridge.jvm()  # started (or replaced) before any key names its pid
        deadline = time.monotonic() + (timeout or self.timeout)
        started: list[tuple[JmxEndpoint, object]] = []
        for endpoint in endpoints:
            key = _key(endpoint)
            with _lock:
                busy = key in _waiting
                if not busy:
                    _waiting.add(key)
            started.append((endpoint, None if busy else _pool.submit(_read_one, endpoint, topics, key)))
        readings = []
        for endpoint, future in started:
            if future is None:
                readings.append(_failed(endpoint, time.time(), 0.0, JMX_TIMEOUT,
                                        f"JMX at {endpoint.address} has still not answered an earlier read"))
                continue
            try:
                readings.append(future.result(timeout=max(0.0, deadline - time.monotonic())))
            except FutureTimeout:
                readings.append(_failed(endpoint, time.time(), timeout or self.timeout, JMX_TIMEOUT,
                                        f"JMX at {endpoint.address} did not answer within {timeout or self.timeout:g} s"))
            except Exception as exc:  # noqa: BLE001 - one broker's surprise must not cost the others their reading
                readings.append(_failed(endpoint, time.time(), 0.0, JMX_FAILED,
                                        f"JMX at {endpoint.address}: {type(exc).__name__}: {exc}"))
        return readings


def _failed(endpoint: JmxEndpoint, at: float, took: float, kind: str, message: str) -> BrokerJmxReading:
    return BrokerJmxReading(broker=endpoint.broker, address=endpoint.address, read_at=at, duration_s=took,
                            error=message, error_kind=kind)


def _read_one(endpoint: JmxEndpoint, topics: bool, key: tuple) -> BrokerJmxReading:
    from py4j.protocol import Py4JError, Py4JJavaError

    at, began = time.time(), time.monotonic()
    try:
        for attempt in (1, 2):
            with _lock:
                kept = _key(endpoint) in _connectors
            try:
                attributes = _read_attributes(_connection(endpoint), topics)
                break
            except (Py4JJavaError, Py4JError):
                _drop(endpoint)
                if not kept or attempt == 2:  # a kept connection may only be stale (the broker restarted)
                    raise
    except Py4JJavaError as exc:
        kind, message = _explain(exc.java_exception, endpoint)
        return _failed(endpoint, at, time.monotonic() - began, kind, message)
    except Py4JError as exc:
        return _failed(endpoint, at, time.monotonic() - began, JMX_FAILED,
                       f"The console's JVM bridge failed while reading JMX at {endpoint.address}: {exc}")
    finally:
        with _lock:
            _waiting.discard(key)  # as it was when the read began: the bridge may have been replaced since
    return _reading(endpoint, at, time.monotonic() - began, attributes)


def _connection(endpoint: JmxEndpoint):
    with _lock:
        connector = _connectors.get(_key(endpoint))
    if connector is None:
        jvm = bridge.jvm()
        environment = jvm.java.util.HashMap()
        if endpoint.username:
            credentials = bridge.new_array(jvm.java.lang.String, 2)
            credentials[0], credentials[1] = endpoint.username, endpoint.password
            environment.put("jmx.remote.credentials", credentials)
        if endpoint.tls:  # the registry and the connector both over TLS, checked against the JVM's trust store
            environment.put("com.sun.jndi.rmi.factory.socket", jvm.javax.rmi.ssl.SslRMIClientSocketFactory())
        url = jvm.javax.management.remote.JMXServiceURL(endpoint.url)
        connector = jvm.javax.management.remote.JMXConnectorFactory.connect(url, environment)
        with _lock:
            _connectors[_key(endpoint)] = connector
    return connector.getMBeanServerConnection()


def _drop(endpoint: JmxEndpoint) -> None:
    with _lock:
        connector = _connectors.pop(_key(endpoint), None)
    if connector is not None:
        try:
            connector.close()
        except Exception:  # noqa: BLE001 - a broken connection may fail to close in any way; it is dropped anyway
            pass


def forget_jmx_connections() -> None:
    """Closes every kept JMX connection (tests that restart brokers; a bridge that was replaced)."""
    with _lock:
        keys = list(_connectors)
    for key in keys:
        with _lock:
            connector = _connectors.pop(key, None)
        if connector is not None:
            try:
                connector.close()
            except Exception:  # noqa: BLE001 - as in _drop
                pass


def _read_attributes(connection, topics: bool) -> dict[str, dict[str, float]]:
    """object name -> attribute -> value. Every MBean's attributes go into one Java map that crosses the bridge
    once, as JSON, instead of a round trip per attribute."""
    jvm = bridge.jvm()
    found = jvm.java.util.LinkedHashMap()
    queries = [(name, _ATTRIBUTES[kind]) for name, kind in BROKER_MBEANS.values()]
    if topics:
        queries += [(f"{_TOPIC_METRICS},name={mbean},topic=*", ("Count", "OneMinuteRate"))
                    for mbean in TOPIC_MBEANS.values()]
    for name, attributes in queries:
        pattern = jvm.javax.management.ObjectName(name)
        if pattern.isPattern():
            matched = sorted(str(n) for n in jvm.java.util.ArrayList(connection.queryNames(pattern, None)))
            if name.endswith(",topic=*"):
                matched = [n for n in matched if TOPIC_NAME.match(n.rpartition(",topic=")[2])][:MAX_TOPICS]
        else:
            matched = [name]
        wanted = bridge.new_array(jvm.java.lang.String, len(attributes))
        for i, attribute in enumerate(attributes):
            wanted[i] = attribute
        for each in matched:
            try:
                found.put(each, connection.getAttributes(jvm.javax.management.ObjectName(each), wanted))
            except Exception as exc:  # noqa: BLE001 - an MBean that is not (yet) there is left out, not failed
                if "InstanceNotFoundException" not in str(exc):
                    raise
    plain = bridge.as_plain(found)
    return {name: {a["name"]: a["value"] for a in values if isinstance(a.get("value"), int | float)}
            for name, values in plain.items()}


def _meter(values: dict[str, float]) -> MeterReading:
    return MeterReading(count=int(values.get("Count", 0)), one_minute_rate=float(values.get("OneMinuteRate", 0.0)))


def _reading(endpoint: JmxEndpoint, at: float, took: float, found: dict[str, dict[str, float]]) -> BrokerJmxReading:
    gauges: dict[str, float] = {}
    meters: dict[str, MeterReading] = {}
    for key, (name, kind) in BROKER_MBEANS.items():
        if name.endswith(",*"):
            prefix = name[:-1]
            parts = [_meter(v) for n, v in found.items() if n.startswith(prefix)]
            # An API nobody called yet has no MBean: its rate is 0, which is what it is.
            meters[key] = MeterReading(sum(p.count for p in parts), sum(p.one_minute_rate for p in parts))
            continue
        values = found.get(name)
        if values is None:
            continue
        if kind == "meter":
            meters[key] = _meter(values)
        elif kind == "idle":
            gauges[key] = 100.0 * min(1.0, float(values.get("OneMinuteRate", 0.0)))
        elif kind == "share":
            gauges[key] = 100.0 * min(1.0, float(values.get("Value", 0.0)))
        elif kind == "p99":
            gauges[key] = float(values.get("99thPercentile", 0.0))
        elif "Value" in values:
            gauges[key] = float(values["Value"])
    topics: dict[str, dict[str, MeterReading]] = {}
    for key, mbean in TOPIC_MBEANS.items():
        prefix = f"{_TOPIC_METRICS},name={mbean},topic="
        for name, values in found.items():
            if name.startswith(prefix):
                topics.setdefault(name[len(prefix):], {})[key] = _meter(values)
    attributes = {f"{name}:{attribute}": value for name, values in found.items() for attribute, value in values.items()}
    return BrokerJmxReading(broker=endpoint.broker, address=endpoint.address, read_at=at, gauges=gauges,
                            meters=meters, topics=topics, attributes=attributes, duration_s=took)


def _explain(throwable, endpoint: JmxEndpoint) -> tuple[str, str]:
    """(kind, message) for a Java failure: the causes' class names say refused, slow, credentials or TLS."""
    chain, cause = [], throwable
    while cause is not None and len(chain) < 8:
        chain.append((str(cause.getClass().getName()), str(cause.getMessage() or "")))
        cause = cause.getCause()
    names = " ".join(name for name, _ in chain)
    detail = next((message for _, message in reversed(chain) if message), chain[0][0] if chain else "")
    where = f"JMX at {endpoint.address} (broker {endpoint.broker})"
    if "SecurityException" in names or "Authentication failed" in detail or "Credentials" in detail:
        return JMX_CREDENTIALS, f"{where} refused the credentials: {detail}"
    if "SSL" in names or "ssl" in detail.lower():
        return JMX_TLS, f"{where} failed the TLS handshake: {detail}"
    if "ConnectException" in names:
        return JMX_REFUSED, f"{where} refused the connection (is JMX on, on this port?): {detail}"
    if "SocketTimeoutException" in names:
        return JMX_TIMEOUT, f"{where} did not answer in time: {detail}"
    if "non-JRMP" in detail or "ConnectIOException" in names:
        return JMX_FAILED, f"{where} did not speak JMX/RMI (a TLS agent, or not a JMX port?): {detail}"
    return JMX_FAILED, f"{where} failed: {chain[0][0].rpartition('.')[2] if chain else ''}: {detail}"
