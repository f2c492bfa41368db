"""Kafka's Java Admin client, for the admin calls librdkafka does not offer (transactions, producer states).

The JVM starts on first use, in the process that asks (with client isolation, the cluster's own client process),
through py4j, which pyspark already brings; it stays warm, with one Admin per cluster, so a page pays for the JVM
once and never for Kafka's command-line tools. Its classpath is the fetched Kafka distribution (KAFKA_TOOLS_LIBS),
whose clients are the same version as the brokers we test against. Every wait is bounded and every Java error
becomes one of console.kafka.errors.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from django.conf import settings

from console.kafka.errors import ClusterUnavailable, KafkaGatewayError, KafkaRequestFailed, NotAuthorized
from console.kafka.java_config import UntranslatableConfig, java_client_config
from console.kafka.types import ClusterConnection, GatewayFace

MSG_NO_LIBS = "Kafka's Java clients are not installed here (no {libs}); run `make deps` or set KAFKA_TOOLS_LIBS."
MSG_TIMEOUT = "Cluster '{cluster}' did not answer within {timeout:g} s ({detail})."

_lock = threading.Lock()
_gateway = None
_admins: dict[tuple, object] = {}
_answered: set[int] = set()  # ids of admins that have answered once: the JVM and the client are warm
# A cold JVM loads and compiles the client's classes during its first request; that request alone may take this
# much longer than the cluster's bound (the cluster's client process allows it: it waits three bounds).
WARMUP_S = 6.0


def jvm():
    global _gateway
    with _lock:
        if _gateway is None:
            from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

            libs = settings.KAFKA_TOOLS_LIBS
            if not os.path.isdir(libs):
                raise KafkaRequestFailed(MSG_NO_LIBS.format(libs=libs))
            port = launch_gateway(classpath=f"{libs}/*", die_on_exit=True, jarpath=_py4j_jar(),
                                  javaopts=["-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                                            "-Dlog4j2.level=ERROR"])
            _gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_convert=True))
        return _gateway.jvm


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
    """The cluster's Java Admin, created once per connection settings."""
    key = (connection.bootstrap_servers, tuple(sorted(connection.config.items())), timeout)
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
    try:
        value = future.get(int((timeout + (WARMUP_S if cold else 0)) * 1000),
                           jvm().java.util.concurrent.TimeUnit.MILLISECONDS)
        if cold:
            _answered.add(id(admin))
        return value
    except Py4JJavaError as exc:
        error = java_error(exc.java_exception, cluster=cluster, timeout=timeout)
        if admin is not None and "AdminClient thread has exited" in error.message:
            _forget(admin)  # a dead client never answers again: the next call makes a new one
        raise error from None
    except Py4JError as exc:
        raise ClusterUnavailable(f"The Java client of cluster '{cluster}' stopped ({exc}).", cluster=cluster) from None


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
    array = _gateway.new_array(gateway.long, len(values))
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
    parameter_types = _gateway.new_array(gateway.java.lang.Class, 2)
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
    array = _gateway.new_array(gateway.long, len(values))
    for i, value in enumerate(values):
        array[i] = value
    return gateway.java.util.Arrays.stream(array).boxed().collect(gateway.java.util.stream.Collectors.toList())


class JavaCalls(GatewayFace):
    """For operation groups that use the Java Admin: one bounded call with the cluster's client."""

    def _java(self, call):
        admin = java_admin(self.connection, self.timeout)
        return wait(call(admin, jvm()), cluster=self.cluster, timeout=self.timeout, admin=admin)


_mapper = None


def as_plain(value):
    """A Java result as plain Python data in one gateway round trip. Reading a description attribute by attribute
    costs one round trip per getter (thousands for a page of groups); Jackson, which Kafka's own libraries ship,
    writes the objects' fields as JSON inside the JVM instead. Optionals become their value or None, enums their
    toString() (GroupState's "Empty", "Stable"...), and a map keyed by TopicPartition gets "topic-partition" keys."""
    global _mapper
    gateway = jvm()
    with _lock:
        if _mapper is None:
            jackson = gateway.com.fasterxml.jackson
            mapper = jackson.databind.ObjectMapper()
            mapper.registerModule(jackson.datatype.jdk8.Jdk8Module())
            accessor = gateway.com.fasterxml.jackson.annotation.PropertyAccessor
            visibility = _gateway.jvm.java.lang.Class.forName(
                "com.fasterxml.jackson.annotation.JsonAutoDetect$Visibility").getEnumConstants()
            by_name = {str(v.name()): v for v in visibility}
            mapper.setVisibility(accessor.ALL, by_name["NONE"])
            mapper.setVisibility(accessor.FIELD, by_name["ANY"])
            features = jackson.databind.SerializationFeature
            mapper.configure(features.FAIL_ON_EMPTY_BEANS, False)
            mapper.configure(features.WRITE_ENUMS_USING_TO_STRING, True)
            _mapper = mapper
    from py4j.protocol import Py4JError

    try:
        return json.loads(str(_mapper.writeValueAsString(value)))
    except Py4JError as exc:
        raise KafkaRequestFailed(f"Kafka's Java client answered something the console cannot read ({exc}).") from None
