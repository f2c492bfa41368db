"""Kafka's Java Admin client, for the admin calls librdkafka does not offer (transactions, producer states).

The JVM starts on first use, in the process that asks (with client isolation, the cluster's own client process),
through py4j, which pyspark already brings; it stays warm, with one Admin per cluster, so a page pays for the JVM
once and never for Kafka's command-line tools. Its classpath is the fetched Kafka distribution (KAFKA_TOOLS_LIBS),
whose clients are the same version as the brokers we test against. Every wait is bounded and every Java error
becomes one of gateway.kafka.errors.

The bridge is a trust boundary: whoever drives the JVM runs code as the console. Its port answers only callers
that present the token the JVM printed to this process alone, and the JVM holds none of the console's environment.
A JVM that dies is noticed by the calls in flight (told so, not given a generic failure) and replaced on the next.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass

from django.conf import settings

from gateway.kafka.errors import ClusterUnavailable, KafkaGatewayError, KafkaRequestFailed, NotAuthorized
from gateway.kafka.java.config import UntranslatableConfig, java_client_config
from gateway.kafka.reachability import check_not_known_unreachable
from gateway.kafka.types import ClusterConnection, GatewayFace, PartitionRef

MSG_NO_LIBS = "Kafka's Java clients are not installed here (no {libs}); run `make deps` or set KAFKA_TOOLS_LIBS."
MSG_TIMEOUT = "Cluster '{cluster}' did not answer within {timeout:g} s ({detail})."
MSG_JVM_STOPPED = ("Kafka's Java client process (the JVM the console asks for {cluster}) stopped ({how}) during this "
                   "request; a new one starts with the next request.")
MSG_JVM_NOT_STARTED = "Kafka's Java client process (JVM) did not start: {detail}"

_lock = threading.Lock()
_bridge: _Bridge | None = None
_admins: dict[tuple, object] = {}
_answered: set[int] = set()  # ids of admins that have answered once: the JVM and the client are warm
# A cold JVM loads and compiles the client's classes during its first request; that request alone may take this
# much longer than the cluster's bound (the cluster's client process allows it: it waits three bounds).
WARMUP_S = 6.0
START_TIMEOUT_S = 30.0  # a JVM that has not said its port and token by then is not going to
# RMI (the JMX reader, ops_jmx.py) otherwise waits minutes on a peer that accepted and never answers.
# JMX over RMI is Java serialization from whatever answers at a broker's JMX address: a hostile server could send
# a gadget chain built from the classes on this classpath (Kafka's jars and their dependencies). Only the JDK's own
# modules that JMX and RMI need are deserialized; anything else is rejected before it is instantiated. py4j and
# Kafka's Admin client do not use Java serialization.
SERIAL_FILTER = ("maxdepth=40;maxrefs=100000;maxbytes=67108864;maxarray=10000000;"
                 "java.base/*;java.management/*;java.management.rmi/*;java.rmi/*;!*")
JVM_OPTIONS = ("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dlog4j2.level=ERROR",
               "-Dsun.rmi.transport.tcp.responseTimeout=8000", "-Dsun.rmi.transport.tcp.handshakeTimeout=8000",
               f"-Djdk.serialFilter={SERIAL_FILTER}")
# The JVM needs none of the console's environment (its clients get their settings, secrets included, as
# properties over the bridge), so it gets only what locates Java and sets its locale: a JVM holding SECRET_KEY or
# DATABASE_URL would hand them to anyone who reaches it.
JVM_ENVIRONMENT = ("PATH", "JAVA_HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "HOME")


@dataclass
class _Bridge:
    """One JVM running py4j's GatewayServer on a loopback port that answers only callers holding its token."""

    process: subprocess.Popen
    gateway: object
    port: int

    def exit_description(self) -> str | None:
        code = self.process.poll()
        if code is None:
            return None
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"


def _launch() -> _Bridge:
    """Starts the JVM with `--enable-auth`: py4j's server then makes a random token, prints it after the port on
    the pipe only this process reads, and drops any connection whose first command does not carry it. Without it,
    any local process could connect to the port and call System.getenv or Runtime.exec in the console's name.
    `--die-on-broken-pipe` ends the JVM when this process ends, however it ends (its stdin closes)."""
    from py4j.java_gateway import GatewayParameters, JavaGateway

    libs = settings.KAFKA_TOOLS_LIBS
    if not os.path.isdir(libs):
        raise KafkaRequestFailed(MSG_NO_LIBS.format(libs=libs))
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    command = [java, "-classpath", os.pathsep.join((_py4j_jar(), f"{libs}/*")), *JVM_OPTIONS,
               "py4j.GatewayServer", "--die-on-broken-pipe", "--enable-auth", "0"]
    environment = {name: os.environ[name] for name in JVM_ENVIRONMENT if name in os.environ}
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env=environment, close_fds=True)
    except OSError as exc:
        raise KafkaRequestFailed(MSG_JVM_NOT_STARTED.format(detail=exc)) from None
    port_line, token_line = _first_lines(process, 2, START_TIMEOUT_S)
    try:
        port = int(port_line)
    except ValueError:
        process.kill()
        process.wait()
        raise KafkaRequestFailed(MSG_JVM_NOT_STARTED.format(detail=port_line or "it said nothing")) from None
    token = token_line.rstrip("\r\n")
    # The server writes nothing more, but a full pipe would block it: read it to the end in the background.
    threading.Thread(target=lambda: process.stdout.read(), daemon=True, name="jvm-stdout").start()
    gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token=token, auto_convert=True))
    return _Bridge(process=process, gateway=gateway, port=port)


def _first_lines(process: subprocess.Popen, count: int, timeout: float) -> list[str]:
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout.readline().decode() for _ in range(count)),
                              daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive() or len(lines) < count:
        process.kill()
        process.wait()
        raise KafkaRequestFailed(MSG_JVM_NOT_STARTED.format(
            detail=f"no port and token within {timeout:g} s" if reader.is_alive() else "it exited at once"))
    return lines


def _current() -> _Bridge:
    """The live bridge, started on first use and again after its JVM died (with everything made in the dead one
    forgotten: admins, the JSON mapper)."""
    global _bridge
    with _lock:
        if _bridge is not None and _bridge.exit_description() is not None:
            _forget_bridge(_bridge)
        if _bridge is None:
            _bridge = _launch()
        return _bridge


def _forget_bridge(bridge: _Bridge) -> None:
    """Drops a dead JVM and what lived in it. Called with _lock held."""
    global _bridge, _mapper
    if _bridge is bridge:
        _bridge, _mapper = None, None
        _admins.clear()
        _answered.clear()
        try:
            bridge.gateway.close()
        except Exception:  # noqa: BLE001 - the socket of a dead JVM may fail to close in any way
            pass


def bridge_port() -> int | None:
    """The loopback port of this process's JVM bridge, if one is running (for health checks and tests)."""
    bridge = _bridge
    return bridge.port if bridge is not None and bridge.exit_description() is None else None


def bridge_pid() -> int | None:
    bridge = _bridge
    return bridge.process.pid if bridge is not None and bridge.exit_description() is None else None


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
        try:  # a JVM that was killed closes its socket a moment before the kernel lets us reap it
            bridge.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        how = bridge.exit_description()
    if how is not None:
        with _lock:
            _forget_bridge(bridge)
        return ClusterUnavailable(MSG_JVM_STOPPED.format(cluster=f"cluster '{cluster}'" if cluster else "a cluster",
                                                         how=how), code="_JVM_STOPPED", cluster=cluster)
    return ClusterUnavailable(f"The Java client of cluster '{cluster}' stopped ({exc}).", cluster=cluster)


def bridge_stop() -> None:
    """Stops this process's JVM, if any (tests, and a process about to fork)."""
    bridge = _bridge
    if bridge is not None:
        bridge.process.kill()
        bridge.process.wait()
        with _lock:
            _forget_bridge(bridge)


def _py4j_jar() -> str:
    import py4j

    for folder in (os.path.join(sys.prefix, "share", "py4j"),
                   os.path.join(os.path.dirname(os.path.dirname(py4j.__file__)), "pyspark", "jars")):
        if os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                if name.startswith("py4j") and name.endswith(".jar"):
                    return os.path.join(folder, name)
    raise KafkaRequestFailed("py4j's jar was not found (it comes with pyspark): run `make deps`.")


def java_admin(connection: ClusterConnection, timeout: float):
    """The cluster's Java Admin, created once per connection settings, bound and lane. A cluster this process has
    just found down fails at once, as it does for the librdkafka calls: a call through the JVM would wait out its
    bound again, and a first one WARMUP_S longer."""
    check_not_known_unreachable(connection)
    key = (connection.bootstrap_servers, tuple(sorted(connection.config.items())), timeout, connection.lane)
    admin = _admins.get(key)
    if admin is None:
        gateway = jvm()
        try:
            config = java_client_config(dict(connection.config))
        except UntranslatableConfig as exc:
            raise KafkaRequestFailed(str(exc), cluster=connection.name) from exc
        properties = gateway.java.util.Properties()
        for name, value in {**config, "bootstrap.servers": connection.bootstrap_servers,
                            "request.timeout.ms": str(int(timeout * 1000)),
                            # our wait bounds each call; this only has to outlast a cold first one
                            "default.api.timeout.ms": str(int((timeout + WARMUP_S) * 1000)),
                            "client.id": config.get("client.id", "kafka-console")}.items():
            properties.setProperty(name, value)
        admin = gateway.org.apache.kafka.clients.admin.Admin.create(properties)
        with _lock:
            _admins[key] = admin
    return admin


def wait(future, *, cluster: str, timeout: float, admin=None):
    """The value of a KafkaFuture, or a gateway error; never waits longer than `timeout` (plus WARMUP_S for the
    first answer of `admin`)."""
    from py4j.protocol import Py4JError, Py4JJavaError

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
    except Py4JJavaError as exc:
        error = java_error(exc.java_exception, cluster=cluster, timeout=timeout)
        if admin is not None and "AdminClient thread has exited" in error.message:
            _forget(admin)  # a dead client never answers again: the next call makes a new one
        raise error from None
    except Py4JError as exc:
        raise bridge_failure(exc, cluster=cluster, bridge=bridge) from None


def _forget(admin) -> None:
    with _lock:
        for key, cached in list(_admins.items()):
            if cached is admin:
                del _admins[key]


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
        from py4j.protocol import Py4JError, Py4JJavaError

        check_not_known_unreachable(self.connection)  # before starting a JVM for it
        bridge = _current()
        try:
            admin = java_admin(self.connection, self.timeout)
            future = call(admin, bridge.gateway.jvm)
        except Py4JJavaError as exc:
            raise java_error(exc.java_exception, cluster=self.cluster, timeout=self.timeout) from None
        except Py4JError as exc:
            raise bridge_failure(exc, cluster=self.cluster, bridge=bridge) from None
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
