"""The client software connected to each broker, from its socket server's JMX metrics.

Since KIP-511 a client names its software and version in ApiVersions, and each broker counts its open connections
by them: kafka.server:type=socket-server-metrics,clientSoftwareName=..,clientSoftwareVersion=..,listener=..,
networkProcessor=.., attribute `connections`. That is a count per broker, listener and processor; which group a
connection's consumer belongs to is not in it. The JMX connections are the broker-metrics reader's (ops_jmx)."""

from __future__ import annotations

import time
from concurrent.futures import TimeoutError as FutureTimeout

from gateway.kafka.java import bridge, ops_jmx
from gateway.kafka.types import GatewayFace
from gateway.kafka.types.metrics import JMX_FAILED, JMX_TIMEOUT, ClientSoftwareReading, JmxEndpoint

SOFTWARE_PATTERN = "kafka.server:type=socket-server-metrics,clientSoftwareName=*,*"


def _counts(connection) -> dict[tuple[str, str, str], int]:
    jvm = bridge.jvm()
    names = jvm.java.util.ArrayList(connection.queryNames(jvm.javax.management.ObjectName(SOFTWARE_PATTERN), None))
    counts: dict[tuple[str, str, str], int] = {}
    for i in range(names.size()):
        name = names.get(i)
        try:
            value = connection.getAttribute(name, "connections")
        except Exception as exc:  # noqa: BLE001 - a connection closed between the query and the read
            if "InstanceNotFoundException" in str(exc):
                continue
            raise
        key = tuple(_unquoted(jvm, name.getKeyProperty(k)) for k in ("clientSoftwareName", "clientSoftwareVersion",
                                                                     "listener"))
        counts[key] = counts.get(key, 0) + int(float(str(value)))
    return {key: n for key, n in counts.items() if n > 0}


def _unquoted(jvm, value) -> str:
    """Kafka's JMX reporter quotes a tag value holding characters an ObjectName reserves; the client chose it."""
    text = str(value or "")
    return str(jvm.javax.management.ObjectName.unquote(text)) if text.startswith('"') else text


def _read_one(endpoint: JmxEndpoint) -> ClientSoftwareReading:
    from py4j.protocol import Py4JError

    for attempt in (1, 2):
        try:
            return ClientSoftwareReading(endpoint.broker, endpoint.address, _counts(ops_jmx.connection_for(endpoint)))
        except Py4JError as exc:
            ops_jmx.drop_connection(endpoint)
            if attempt == 1:  # the first failure may only be a kept connection gone stale (a broker restart)
                continue
            thrown = bridge.java_thrown(exc)
            if thrown is not None:
                kind, message = ops_jmx.explain_failure(thrown, endpoint)
                return ClientSoftwareReading(endpoint.broker, endpoint.address, error=message, error_kind=kind)
            return ClientSoftwareReading(endpoint.broker, endpoint.address, error_kind=JMX_FAILED, error=(
                f"The console's JVM bridge failed while reading JMX at {endpoint.address}: {exc}"))
    raise AssertionError("unreachable")


class ClientSoftwareOps(GatewayFace):
    def read_client_software(self, endpoints: list[JmxEndpoint], *,
                             timeout: float | None = None) -> list[ClientSoftwareReading]:
        """Every broker's open connections by client software and version, all brokers at once within `timeout`;
        a broker whose JMX fails or is slow gets a reading that says why."""
        for endpoint in endpoints:
            ops_jmx.check_endpoint(endpoint)
        bridge.jvm()
        bound = timeout or self.timeout
        deadline = time.monotonic() + bound
        futures = [(e, ops_jmx.submit_read(_read_one, e)) for e in endpoints]
        readings = []
        for endpoint, future in futures:
            try:
                readings.append(future.result(timeout=max(0.0, deadline - time.monotonic())))
            except FutureTimeout:
                readings.append(ClientSoftwareReading(endpoint.broker, endpoint.address, error_kind=JMX_TIMEOUT,
                                                      error=f"JMX at {endpoint.address} did not answer within "
                                                            f"{bound:g} s"))
        return readings
