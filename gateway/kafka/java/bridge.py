"""Kafka's Java Admin client, for the admin calls librdkafka does not offer (transactions, producer states).

The host has one JVM for it (gateway.kafka.java.host_jvm): started on first use by whichever process asks (with
client isolation, a cluster's client process), found by the others, driven through py4j, which pyspark already
brings. It stays warm, with one Admin client per cluster connection shared by every process of the host and closed
when no process used it for ADMIN_IDLE_S, so a page pays for the JVM once and never for Kafka's command-line tools.
Its classpath is the fetched Kafka distribution (KAFKA_TOOLS_LIBS), whose clients are the same version as the
brokers we test against. Every wait is bounded and every Java error becomes one of gateway.kafka.errors, for the
cluster whose call it was: one cluster's Admin client failing (its thread gone, say) gets that client replaced and
leaves the others alone.

The bridge is a trust boundary: whoever drives the JVM runs code as the console. Its port answers only callers
that present the token py4j made (kept in a 0600 file of the private client folder), and the JVM holds none of the
console's environment. A JVM that dies is noticed by the calls in flight (told so, not given a generic failure) and
replaced on the next.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass

from gateway.kafka.errors import ClusterUnavailable, KafkaGatewayError, KafkaRequestFailed, NotAuthorized
from gateway.kafka.java import host_jvm
from gateway.kafka.java.config import UntranslatableConfig, java_client_config
from gateway.kafka.java.host_jvm import JVM_ENVIRONMENT, MSG_JVM_NOT_STARTED, MSG_NO_LIBS  # noqa: F401 - named here by tests
from gateway.kafka.reachability import check_not_known_unreachable
from gateway.kafka.types import ClusterConnection, GatewayFace, PartitionRef

MSG_TIMEOUT = "Cluster '{cluster}' did not answer within {timeout:g} s ({detail})."
MSG_JVM_STOPPED = ("Kafka's Java client process (the JVM the console asks for {cluster}) stopped ({how}) during this "
                   "request; a new one starts with the next request.")

_lock = threading.Lock()
_bridge: _Bridge | None = None
_dead: host_jvm.HostJvm | None = None  # the last JVM this process saw die: never reconnected to
_admins: dict[str, object] = {}  # this process's handles on the host's Admin clients, by fingerprint
_touched: dict[str, float] = {}  # when this process last used each (monotonic)
_answered: set[int] = set()  # ids of admins that have answered once: the JVM and the client are warm
# A cold JVM loads and compiles the client's classes during its first request; that request alone may take this
# much longer than the cluster's bound (the cluster's client process allows it: it waits three bounds).
WARMUP_S = 6.0
# An Admin client no process of the host used for this long is closed (its connections and thread with it); the
# sweep that closes them runs in whichever process makes a call, at most every ADMIN_SWEEP_S.
ADMIN_IDLE_S = 600.0
ADMIN_SWEEP_S = 60.0
# The JVM's registry of Admin clients: maps kept in its system properties, the one place every py4j connection of
# the JVM can find by name (py4j's server started from the command line has no entry point of ours).
ADMINS_PROPERTY = "kafka-console.admins"
USED_PROPERTY = "kafka-console.admins.used"  # fingerprint -> epoch milliseconds of its last use
MSG_ADMIN_GONE = ("AdminClient thread has exited", "not accepting new calls")


@dataclass
class _Bridge:
    """This process's py4j connection to the host's JVM, and the JVM's registry of Admin clients."""

    host: host_jvm.HostJvm
    gateway: object
    admins: object
    used: object
    swept_at: float = 0.0

    @property
    def port(self) -> int:
        return self.host.port

    def exit_description(self) -> str | None:
        return self.host.exit_description()


def _connect(host: host_jvm.HostJvm) -> _Bridge:
    from py4j.java_gateway import GatewayParameters, JavaGateway
    from py4j.protocol import Py4JError

    gateway = JavaGateway(gateway_parameters=GatewayParameters(port=host.port, auth_token=host.token,
                                                               auto_convert=True))
    try:
        properties = gateway.jvm.java.lang.System.getProperties()
        maps = []
        for name in (ADMINS_PROPERTY, USED_PROPERTY):  # putIfAbsent: racing processes agree on one map
            properties.putIfAbsent(name, gateway.jvm.java.util.concurrent.ConcurrentHashMap())
            maps.append(properties.get(name))
    except Py4JError as exc:
        gateway.close()
        raise KafkaRequestFailed(MSG_JVM_NOT_STARTED.format(detail=f"it did not answer ({exc})")) from None
    return _Bridge(host=host, gateway=gateway, admins=maps[0], used=maps[1])


def _current() -> _Bridge:
    """The live bridge: the host's JVM, found or started on first use and again after it died (with everything
    this process held in the dead one forgotten: admins, the JSON mapper)."""
    global _bridge
    with _lock:
        if _bridge is not None and _bridge.exit_description() is not None:
            _forget_bridge(_bridge)
        if _bridge is None:
            _bridge = _connect(host_jvm.find_or_start(known_dead=_dead))
        return _bridge


def _forget_bridge(bridge: _Bridge) -> None:
    """Drops a dead JVM and what lived in it. Called with _lock held."""
    global _bridge, _mapper, _dead
    if _bridge is bridge:
        _bridge, _mapper, _dead = None, None, bridge.host
        _admins.clear()
        _touched.clear()
        _answered.clear()
        try:
            bridge.gateway.close()
        except Exception:  # noqa: BLE001 - the socket of a dead JVM may fail to close in any way
            pass
        # py4j's close() leaves the client "connected": every Java object still referenced here then tried to
        # reach the gone JVM when it was collected (at exit, a traceback per object). Marked disconnected, their
        # release is skipped, and a call through this bridge fails at once (it is forgotten: none is made).
        bridge.gateway._gateway_client.is_connected = False


def bridge_port() -> int | None:
    """The loopback port of the JVM this process drives, if it runs (for health checks and tests)."""
    bridge = _bridge
    return bridge.port if bridge is not None and bridge.exit_description() is None else None


def bridge_pid() -> int | None:
    bridge = _bridge
    return bridge.host.pid if bridge is not None and bridge.exit_description() is None else None


def jvm():
    return _current().gateway.jvm


def _gateway():
    return _current().gateway


def new_array(java_class, size: int):
    return _gateway().new_array(java_class, size)


def bridge_failure(exc: Exception, *, cluster: str, bridge: _Bridge | None) -> ClusterUnavailable:
    """What a py4j error (not a Java exception) means: the JVM the call was using died (say so; the next call
    starts a new one) or only the connection to it broke."""
    how = None
    if bridge is not None:
        # a JVM that was killed closes its socket a moment before the kernel lets us reap it (or its pid go)
        deadline = time.monotonic() + 2
        if bridge.host.process is not None:
            try:
                bridge.host.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        while bridge.exit_description() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        how = bridge.exit_description()
    if how is not None:
        with _lock:
            _forget_bridge(bridge)
        return ClusterUnavailable(MSG_JVM_STOPPED.format(cluster=f"cluster '{cluster}'" if cluster else "a cluster",
                                                         how=how), code="_JVM_STOPPED", cluster=cluster)
    return ClusterUnavailable(f"The Java client of cluster '{cluster}' stopped ({exc}).", cluster=cluster)


def bridge_stop() -> None:
    """Stops the host's JVM (the one of this process's client folder), if any: for every process of the host, which
    start another on their next call (tests; stop_host_processes)."""
    bridge = _bridge
    host_jvm.stop()
    if bridge is not None:
        if bridge.host.process is not None:
            bridge.host.process.kill()
            bridge.host.process.wait()
        with _lock:
            _forget_bridge(bridge)


def _fingerprint(connection: ClusterConnection, timeout: float, token: str) -> str:
    """Names the Admin client of these connection settings and bound in the JVM's registry: keyed by the JVM's
    token, so the settings' secrets cannot be guessed from it. A certificate or key file replaced (renewed) gets a
    new client: the Java client reads them once, when it is made."""
    files = []
    for key, value in sorted(connection.config.items()):
        if key.endswith(".location"):
            try:
                info = os.stat(value)
                files.append((key, info.st_mtime_ns, info.st_size))
            except OSError:
                files.append((key, None, None))
    described = repr((connection.bootstrap_servers, sorted(connection.config.items()), files, timeout))
    return hmac.new(token.encode(), described.encode(), hashlib.sha256).hexdigest()


def java_admin(connection: ClusterConnection, timeout: float):
    """The Admin client of this connection's settings and bound, shared by every process of the host (made here if
    none has it). A cluster this process has just found down fails at once, as it does for the librdkafka calls:
    a call through the JVM would wait out its bound again, and a first one WARMUP_S longer."""
    check_not_known_unreachable(connection)
    bridge = _current()
    fingerprint = _fingerprint(connection, timeout, bridge.host.token)
    now = time.monotonic()
    admin = _admins.get(fingerprint)
    if admin is not None and now - _touched.get(fingerprint, 0.0) > ADMIN_IDLE_S / 2:
        admin = None  # another process may have closed it as idle since: ask the registry again
    if admin is None:
        admin = bridge.admins.get(fingerprint)
    if admin is None:
        admin = _new_admin(bridge, connection, timeout)
        existing = bridge.admins.putIfAbsent(fingerprint, admin)
        if existing is not None:  # another process made one meanwhile: this one goes
            admin.close(bridge.gateway.jvm.java.time.Duration.ZERO)
            admin = existing
    bridge.used.put(fingerprint, int(time.time() * 1000))
    with _lock:
        _admins[fingerprint] = admin
        _touched[fingerprint] = now
    if now - bridge.swept_at > ADMIN_SWEEP_S:
        bridge.swept_at = now
        threading.Thread(target=_close_idle_admins, args=(bridge,), daemon=True, name="java-admin-sweep").start()
    return admin


def _new_admin(bridge: _Bridge, connection: ClusterConnection, timeout: float):
    try:
        config = java_client_config(dict(connection.config))
    except UntranslatableConfig as exc:
        raise KafkaRequestFailed(str(exc), cluster=connection.name) from exc
    properties = bridge.gateway.jvm.java.util.Properties()
    for name, value in {**config, "bootstrap.servers": connection.bootstrap_servers,
                        "request.timeout.ms": str(int(timeout * 1000)),
                        # our wait bounds each call; this only has to outlast a cold first one
                        "default.api.timeout.ms": str(int((timeout + WARMUP_S) * 1000)),
                        "client.id": config.get("client.id", "kafka-console")}.items():
        properties.setProperty(name, value)
    return bridge.gateway.jvm.org.apache.kafka.clients.admin.Admin.create(properties)


def _close_idle_admins(bridge: _Bridge) -> None:
    """Closes the host's Admin clients that no process used for ADMIN_IDLE_S. The conditional removes make one
    process win each client: a use recorded meanwhile keeps it."""
    from py4j.protocol import Py4JError

    try:
        used = json.loads(str(_jackson().writeValueAsString(bridge.used)))
        cutoff = time.time() * 1000 - ADMIN_IDLE_S * 1000
        for fingerprint, last in used.items():
            if last >= cutoff or not bridge.used.remove(fingerprint, last):
                continue
            admin = bridge.admins.remove(fingerprint)
            with _lock:
                _admins.pop(fingerprint, None)
            if admin is not None:
                admin.close(bridge.gateway.jvm.java.time.Duration.ofSeconds(5))
    except (Py4JError, ValueError, KafkaGatewayError):
        pass  # a JVM gone or going: the next call's own handling says so


def wait(future, *, cluster: str, timeout: float, admin=None):
    """The value of a KafkaFuture, or a gateway error; never waits longer than `timeout` (plus WARMUP_S for the
    first answer of `admin`)."""
    from py4j.protocol import Py4JError

    cold = admin is not None and id(admin) not in _answered
    bridge = _bridge  # the JVM the future lives in; a dead one must not be replaced before it is reported
    try:
        if bridge is None:
            raise Py4JError("no JVM")
        value = future.get(int((timeout + (WARMUP_S if cold else 0)) * 1000),
                           bridge.gateway.jvm.java.util.concurrent.TimeUnit.MILLISECONDS)
        if cold:
            _answered.add(id(admin))
        return value
    except Py4JError as exc:
        thrown = java_thrown(exc)
        if thrown is None:
            raise bridge_failure(exc, cluster=cluster, bridge=bridge) from None
        error = java_error(thrown, cluster=cluster, timeout=timeout)
        if admin is not None and any(gone in error.message for gone in MSG_ADMIN_GONE):
            _forget(admin)  # a closed or dead client never answers again: the next call makes a new one
        raise error from None


def java_thrown(exc: Exception):
    """The Java exception behind a py4j error, or None where the bridge itself failed. Once a SparkSession has run
    in a process, pyspark's exception converter wraps py4j's module-wide get_return_value and looks Java exceptions
    up in Spark's JVM by object id; for this bridge's JVM that fails with a Py4JError raised while handling the
    Py4JJavaError, which still holds what Java threw."""
    from py4j.protocol import Py4JJavaError

    for candidate in (exc, exc.__context__):
        if isinstance(candidate, Py4JJavaError):
            return candidate.java_exception
    return None


def _forget(admin) -> None:
    """Drops a dead Admin client, here and from the JVM's registry (only this one: other clusters' stay)."""
    bridge = _bridge
    with _lock:
        gone = [key for key, cached in _admins.items() if cached is admin]
        for key in gone:
            del _admins[key]
    if bridge is not None:
        from py4j.protocol import Py4JError

        for key in gone:
            try:
                bridge.admins.remove(key, admin)
            except Py4JError:
                pass


def java_error(throwable, *, cluster: str, timeout: float) -> KafkaGatewayError:
    """Maps a Java exception (unwrapping ExecutionException) to the gateway's errors."""
    cause = throwable
    while cause.getClass().getName() in ("java.util.concurrent.ExecutionException",
                                         "java.util.concurrent.CompletionException") and cause.getCause():
        cause = cause.getCause()
    kind = cause.getClass().getSimpleName()
    detail = str(cause.getMessage() or kind)
    if kind == "TimeoutException":
        return ClusterUnavailable(MSG_TIMEOUT.format(cluster=cluster, timeout=timeout, detail=detail),
                                  code="_TIMED_OUT", cluster=cluster)
    if kind.endswith("AuthorizationException") or kind in ("SaslAuthenticationException",
                                                           "AuthenticationException", "SslAuthenticationException"):
        return NotAuthorized(f"Cluster '{cluster}' refused: {detail}", code=kind, cluster=cluster)
    return KafkaRequestFailed(detail, code=kind, cluster=cluster)


def long_set(values):
    """A java.util.Set<Long>. py4j hands every boxed number back to Python as an int and sends small ints as
    Integer, and an Integer in a Set<Long> kills the Admin client's thread when it builds the request."""
    gateway = jvm()
    array = _gateway().new_array(gateway.long, len(values))
    for i, value in enumerate(values):
        array[i] = value
    return gateway.java.util.Arrays.stream(array).boxed().collect(gateway.java.util.stream.Collectors.toSet())


def long_valued_map(pairs: list[tuple[object, int]]):
    """A java.util.Map<K, Long> from (Java key, int) pairs. Whatever Python hands py4j as a small number arrives as
    an Integer, and a Map<..., Long> holding one fails inside the Admin client; so the Longs are boxed in Java
    (from a long[]) and each put is made there too, by reflection, without the value crossing back."""
    gateway = jvm()
    boxed = _long_list([value for _, value in pairs])
    target = gateway.java.util.HashMap()
    object_class = gateway.java.lang.Class.forName("java.lang.Object")
    parameter_types = _gateway().new_array(gateway.java.lang.Class, 2)
    parameter_types[0] = parameter_types[1] = object_class
    put = target.getClass().getMethod("put", parameter_types)
    for i, (key, _) in enumerate(pairs):
        arguments = gateway.java.util.ArrayList()
        arguments.add(key)
        arguments.addAll(boxed.subList(i, i + 1))
        put.invoke(target, arguments.toArray())
    return target


def _long_list(values):
    gateway = jvm()
    array = _gateway().new_array(gateway.long, len(values))
    for i, value in enumerate(values):
        array[i] = value
    return gateway.java.util.Arrays.stream(array).boxed().collect(gateway.java.util.stream.Collectors.toList())


class JavaCalls(GatewayFace):
    """For operation groups that use the Java Admin: one bounded call with the cluster's client."""

    def _java(self, call):
        from py4j.protocol import Py4JError

        check_not_known_unreachable(self.connection)  # before starting a JVM for it
        bridge = _current()
        try:
            admin = java_admin(self.connection, self.timeout)
            future = call(admin, bridge.gateway.jvm)
        except Py4JError as exc:
            thrown = java_thrown(exc)
            if thrown is None:
                raise bridge_failure(exc, cluster=self.cluster, bridge=bridge) from None
            raise java_error(thrown, cluster=self.cluster, timeout=self.timeout) from None
        return wait(future, cluster=self.cluster, timeout=self.timeout, admin=admin)


_mapper = None


def _jackson():
    """One ObjectMapper that reads and writes objects by their fields (Kafka's result classes have no bean getters)."""
    global _mapper
    gateway = jvm()
    with _lock:
        if _mapper is None:
            jackson = gateway.com.fasterxml.jackson
            mapper = jackson.databind.ObjectMapper()
            mapper.registerModule(jackson.datatype.jdk8.Jdk8Module())
            accessor = gateway.com.fasterxml.jackson.annotation.PropertyAccessor
            visibility = gateway.java.lang.Class.forName(
                "com.fasterxml.jackson.annotation.JsonAutoDetect$Visibility").getEnumConstants()
            by_name = {str(v.name()): v for v in visibility}
            mapper.setVisibility(accessor.ALL, by_name["NONE"])
            mapper.setVisibility(accessor.FIELD, by_name["ANY"])
            features = jackson.databind.SerializationFeature
            mapper.configure(features.FAIL_ON_EMPTY_BEANS, False)
            mapper.configure(features.WRITE_ENUMS_USING_TO_STRING, True)
            _mapper = mapper
        return _mapper


def as_plain(value):
    """A Java result as plain Python data in one gateway round trip. Reading a description attribute by attribute
    costs one round trip per getter (thousands for a page of groups); Jackson, which Kafka's own libraries ship,
    writes the objects' fields as JSON inside the JVM instead. Optionals become their value or None, enums their
    toString() (GroupState's "Empty", "Stable"...), and a map keyed by TopicPartition gets "topic-partition" keys."""
    mapper = _jackson()
    from py4j.protocol import Py4JError

    try:
        return json.loads(str(mapper.writeValueAsString(value)))
    except Py4JError as exc:
        raise _unreadable(exc) from None


def string_keyed_map(values: dict[str, dict], value_class: str):
    """A java.util.Map<String, value_class> made by Jackson from one JSON text: building a map of thousands of
    entries through py4j would cost a round trip per entry (and per value object)."""
    mapper = _jackson()
    gateway = jvm()
    from py4j.protocol import Py4JError

    try:
        forname = gateway.java.lang.Class.forName
        java_type = mapper.getTypeFactory().constructMapType(
            forname("java.util.LinkedHashMap"), forname("java.lang.String"), forname(value_class))
        return mapper.readValue(json.dumps(values), java_type)
    except Py4JError as exc:
        raise _unreadable(exc) from None


def partition_ref(key: str) -> PartitionRef:
    """A TopicPartition map key as Jackson writes it (toString: topic, '-', partition): the partition is always
    the last part, whatever dashes the topic's name holds."""
    topic, _, partition = key.rpartition("-")
    return PartitionRef(topic, int(partition))


def _unreadable(exc: Exception) -> KafkaGatewayError:
    if _bridge is None or _bridge.exit_description() is not None:
        return bridge_failure(exc, cluster="", bridge=_bridge)
    return KafkaRequestFailed(f"Kafka's Java client answered something the console cannot read ({exc}).")
