"""Broker metrics over JMX, read through the console's JVM bridge (javax.management.remote over RMI).

Each broker's agent is asked in a thread of its own, so brokers are read side by side and a slow one costs its own
reading, not the others': whatever has not answered by the deadline is reported as slow and its thread left to
RMI's own time-outs (set on the bridge's JVM), and the next read of that broker is refused at once while it still
waits. Connections are kept per agent and dropped on any failure, so a sample costs a few RMI calls, not a login.
The MBeans read are fixed here; the only name a caller puts in one is a topic's, checked against Kafka's own rule.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from gateway.kafka.broker_mbeans import (MAX_PARTITIONS, MAX_TOPICS, RETENTION_SHARE, reading_from_attributes,
                                         wanted_mbeans)
from gateway.kafka.errors import InvalidRequest
from gateway.kafka.java import bridge
from gateway.kafka.types import GatewayFace
from gateway.kafka.types.metrics import (JMX_CREDENTIALS, JMX_FAILED, JMX_HOST, JMX_REFUSED, JMX_TIMEOUT, JMX_TLS,
                                         TOPIC_NAME, BrokerJmxReading, JmxEndpoint)

MAX_BROKERS_AT_ONCE = 16

_pool = ThreadPoolExecutor(max_workers=MAX_BROKERS_AT_ONCE, thread_name_prefix="jmx-read")
_lock = threading.Lock()
_connectors: dict[tuple, object] = {}  # (url, user, password, tls) -> a connected JMXConnector in the bridge's JVM
_waiting: set[tuple] = set()  # agents whose last read has not come back yet


def _key(endpoint: JmxEndpoint) -> tuple:
    # The bridge's pid: connections made in a JVM that has since been replaced are not reused.
    return endpoint.url, endpoint.username, endpoint.password, endpoint.tls, endpoint.ca_file, bridge.bridge_pid()


# Java's RMI over TLS (SslRMIClientSocketFactory) takes the JVM's default SSL socket factory at its first connection
# and keeps it: the CA files agents are checked against must be in the default context before then. A CA asked for
# after that needs a new JVM, which the read then starts (the Java Admin calls in flight are told so). The JVM is the
# host's, driven by several processes: what its default context trusts, and whether a TLS connection was made, are
# kept in it (system properties), not in the process that set them.
_trust_lock = threading.Lock()
CA_FILES_PROPERTY = "kafka-console.jmx.ca-files"  # JSON list
TLS_USED_PROPERTY = "kafka-console.jmx.tls-used"


def _trusted_files(jvm) -> frozenset[str]:
    try:
        return frozenset(json.loads(jvm.java.lang.System.getProperty(CA_FILES_PROPERTY) or "[]"))
    except ValueError:
        return frozenset()


def _trust_ca(ca_file: str) -> None:
    with _trust_lock:
        jvm = bridge.jvm()
        files = _trusted_files(jvm)
        if ca_file in files:
            return
        if jvm.java.lang.System.getProperty(TLS_USED_PROPERTY):
            forget_jmx_connections()
            bridge.bridge_stop()
            jvm = bridge.jvm()
            files = _trusted_files(jvm)
        files = files | {ca_file}
        store = jvm.java.security.KeyStore.getInstance(jvm.java.security.KeyStore.getDefaultType())
        store.load(None, None)
        factories = jvm.javax.net.ssl.TrustManagerFactory
        java_own = factories.getInstance(factories.getDefaultAlgorithm())
        java_own.init(None)  # Java's own CA certificates stay trusted
        for manager in java_own.getTrustManagers():
            for i, issuer in enumerate(manager.getAcceptedIssuers()):
                store.setCertificateEntry(f"java-{i}", issuer)
        certificates = jvm.java.security.cert.CertificateFactory.getInstance("X.509")
        for n, path in enumerate(sorted(files)):
            stream = jvm.java.io.FileInputStream(path)
            try:
                found = jvm.java.util.ArrayList(certificates.generateCertificates(stream))
            finally:
                stream.close()
            for i in range(found.size()):
                store.setCertificateEntry(f"ca-{n}-{i}", found.get(i))
        trusting = factories.getInstance(factories.getDefaultAlgorithm())
        trusting.init(store)
        context = jvm.javax.net.ssl.SSLContext.getInstance("TLS")
        context.init(None, trusting.getTrustManagers(), None)
        jvm.javax.net.ssl.SSLContext.setDefault(context)
        jvm.java.lang.System.setProperty(CA_FILES_PROPERTY, json.dumps(sorted(files)))


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
    from py4j.protocol import Py4JError

    at, began = time.time(), time.monotonic()
    try:
        for attempt in (1, 2):
            with _lock:
                kept = _key(endpoint) in _connectors
            try:
                attributes = _read_attributes(_connection(endpoint), topics)
                break
            except Py4JError:
                _drop(endpoint)
                if not kept or attempt == 2:  # a kept connection may only be stale (the broker restarted)
                    raise
    except Py4JError as exc:
        thrown = bridge.java_thrown(exc)  # what Java threw, also where pyspark's converter failed on it
        if thrown is not None:
            kind, message = _explain(thrown, endpoint)
            return _failed(endpoint, at, time.monotonic() - began, kind, message)
        return _failed(endpoint, at, time.monotonic() - began, JMX_FAILED,
                       f"The console's JVM bridge failed while reading JMX at {endpoint.address}: {exc}")
    finally:
        with _lock:
            _waiting.discard(key)  # as it was when the read began: the bridge may have been replaced since
    return reading_from_attributes(endpoint.broker, endpoint.address, at, time.monotonic() - began, attributes)


def _connection(endpoint: JmxEndpoint):
    with _lock:
        connector = _connectors.get(_key(endpoint))
    if connector is None:
        jvm = bridge.jvm()
        environment = _credentials(jvm, endpoint)
        if endpoint.tls:  # the registry and the connector both over TLS, checked against the JVM's trust store
            if endpoint.ca_file:
                _trust_ca(endpoint.ca_file)
                jvm = bridge.jvm()
                environment = _credentials(jvm, endpoint)
            jvm.java.lang.System.setProperty(TLS_USED_PROPERTY, "true")
            environment.put("com.sun.jndi.rmi.factory.socket", jvm.javax.rmi.ssl.SslRMIClientSocketFactory())
        url = jvm.javax.management.remote.JMXServiceURL(endpoint.url)
        connector = jvm.javax.management.remote.JMXConnectorFactory.connect(url, environment)
        with _lock:
            _connectors[_key(endpoint)] = connector
    return connector.getMBeanServerConnection()


def _credentials(jvm, endpoint: JmxEndpoint):
    environment = jvm.java.util.HashMap()
    if endpoint.username:
        credentials = bridge.new_array(jvm.java.lang.String, 2)
        credentials[0], credentials[1] = endpoint.username, endpoint.password
        environment.put("jmx.remote.credentials", credentials)
    return environment


def _drop(endpoint: JmxEndpoint) -> None:
    with _lock:
        connector = _connectors.pop(_key(endpoint), None)
    if connector is not None:
        try:
            connector.close()
        except Exception:  # noqa: BLE001 - a broken connection may fail to close in any way; it is dropped anyway
            pass


def connection_for(endpoint: JmxEndpoint):
    """The kept (or a new) MBean server connection of one agent, for the other JMX readers of this package."""
    return _connection(endpoint)


def drop_connection(endpoint: JmxEndpoint) -> None:
    _drop(endpoint)


def explain_failure(throwable, endpoint: JmxEndpoint) -> tuple[str, str]:
    return _explain(throwable, endpoint)


def submit_read(read, endpoint: JmxEndpoint):
    """Runs `read(endpoint)` in the readers' thread pool, so every JMX read of the process is bounded together."""
    return _pool.submit(read, endpoint)


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
    wanted_names = wanted_mbeans(topics) + ([(f"{RETENTION_SHARE},*", ("Value",))] if topics else [])
    for name, attributes in wanted_names:
        pattern = jvm.javax.management.ObjectName(name)
        if name.startswith(RETENTION_SHARE):  # the broker keeps only the partitions above 0 (a query it evaluates)
            query = jvm.javax.management.Query
            above_zero = query.gt(query.attr("Value"), query.value(0))
            matched = sorted(str(n) for n in jvm.java.util.ArrayList(connection.queryNames(pattern, above_zero)))
            matched = [n for n in matched
                       if TOPIC_NAME.match(n.partition(",topic=")[2].rpartition(",partition=")[0])][:MAX_PARTITIONS]
        elif pattern.isPattern():
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
