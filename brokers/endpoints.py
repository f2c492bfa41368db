"""Which JMX address each broker has, from a source's spec (pure), and the credentials from the environment.

A JMX host comes from the registration, never from the cluster's answer alone: `+OFFSET` and `:PORT` take each
broker's host as Kafka lists it only when that host is one of the registered bootstrap servers' (the admin typed
those); a template (`kafka-{id}.internal:9999`) or an explicit list names hosts of the admin's own. Otherwise a
cluster listing a host of its choice would receive the JMX user and password (and the console's JMX client would
read that host's answers)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from console.clusters.client_settings import SettingRefused, check_cert_file, check_secret_env_name, check_secret_value
from console.errors import ConsoleError
from gateway.kafka.types import JmxEndpoint
from gateway.kafka.types.metrics import JMX_HOST

MSG_SPEC = ("JMX addresses are '+OFFSET' (each broker's host, its Kafka port plus OFFSET), ':PORT' (each broker's host, "
            "that port), 'HOST:PORT' or 'HOST:+OFFSET' with {{id}} in HOST for the broker's id "
            "(kafka-{{id}}.example.com:9999), or 'ID=HOST:PORT,...' per broker; '{spec}' is none of these.")
MSG_HOST = "'{host}' is not a host name or IP address."
MSG_NO_PASSWORD = "The JMX password of cluster '{cluster}' is read from ${env}, which is not set."
MSG_UNREGISTERED_HOST = (
    "Kafka lists broker {broker} at {host}, which is none of the hosts registered for cluster '{cluster}' ({hosts}): "
    "its JMX is not asked, so the JMX credentials do not go to a host only the cluster named. Give the JMX "
    "addresses in the metrics source: a template with {{id}} (kafka-{{id}}.example.com:9999) or 'ID=HOST:PORT,...'.")
_OFFSET = re.compile(r"^\+(\d{1,5})$")
_PORT = re.compile(r"^:(\d{1,5})$")
_TEMPLATE = re.compile(r"^([A-Za-z0-9.-]*\{id\}[A-Za-z0-9.-]*):(\+?)(\d{1,5})$")
_ONE = re.compile(r"^(\d{1,9})=(\[[0-9A-Fa-f:.]+\]|[^:\s]+):(\d{1,5})$")


def _port(text: str, spec: str) -> int:
    port = int(text)
    if not 0 < port < 65536:
        raise ConsoleError(MSG_SPEC.format(spec=spec))
    return port


def parse_jmx_spec(spec: str) -> tuple[str, object]:
    """("offset", n) | ("port", n) | ("template", (host with {id}, "offset" or "port", n)) |
    ("brokers", {id: (host, port)}); ConsoleError for anything else."""
    spec = (spec or "").strip()
    if m := _OFFSET.match(spec):
        return "offset", int(m[1])
    if m := _PORT.match(spec):
        return "port", _port(m[1], spec)
    if m := _TEMPLATE.match(spec):
        if not JMX_HOST.match(m[1].replace("{id}", "1")):
            raise ConsoleError(MSG_HOST.format(host=m[1]))
        return "template", (m[1], "offset" if m[2] else "port", int(m[3]) if m[2] else _port(m[3], spec))
    brokers: dict[int, tuple[str, int]] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        m = _ONE.match(part)
        if not m:
            raise ConsoleError(MSG_SPEC.format(spec=spec))
        if not JMX_HOST.match(m[2]):
            raise ConsoleError(MSG_HOST.format(host=m[2]))
        brokers[int(m[1])] = (m[2].strip("[]"), _port(m[3], spec))
    if not brokers:
        raise ConsoleError(MSG_SPEC.format(spec=spec))
    return "brokers", brokers


@dataclass(frozen=True)
class Addresses:
    found: dict[int, tuple[str, int]] = field(default_factory=dict)  # broker id -> (host, port)
    unregistered: dict[int, str] = field(default_factory=dict)  # broker id -> the host Kafka lists, not registered


def registered_hosts(bootstrap_servers: str) -> set[str]:
    """The hosts of a registration's bootstrap servers ('host:port,...'; [v6]:port), in lower case."""
    hosts = set()
    for server in filter(None, (s.strip().rpartition("://")[2] for s in (bootstrap_servers or "").split(","))):
        host = server.rpartition(":")[0] if server.count(":") == 1 or server.startswith("[") else server
        hosts.add(host.strip("[]").lower())
    return hosts


def jmx_addresses(spec: str, brokers: list[tuple[int, str, int]], registered: set[str] | None) -> Addresses:
    """Each broker's JMX address, for the brokers Kafka lists ((id, host, Kafka port)); an explicit list is used as
    it is, so a broker that is down still gets its tile. `registered`: the hosts a broker's own may be used for
    ('+OFFSET', ':PORT'), None for any; a broker listed at another host is in `unregistered`, with no address."""
    kind, value = parse_jmx_spec(spec)
    if kind == "brokers":
        return Addresses(dict(value))
    found, unregistered = {}, {}
    for broker, host, port in brokers:
        if kind == "template":
            template, how, number = value
            host, jmx_port = template.replace("{id}", str(broker)), (port + number if how == "offset" else number)
        else:
            jmx_port = port + value if kind == "offset" else value
            if registered is not None and host.strip("[]").lower() not in registered:
                unregistered[broker] = host
                continue
        if JMX_HOST.match(host) and 0 < jmx_port < 65536:
            found[broker] = (host, jmx_port)
    return Addresses(found, unregistered)


def jmx_password(cluster: str, username: str, env_name: str) -> str:
    """The password from the variable the source names, under the same rules as a cluster's secrets."""
    if not username or not env_name:
        return ""
    value = os.environ.get(env_name)
    if value is None:
        raise ConsoleError(MSG_NO_PASSWORD.format(cluster=cluster, env=env_name))
    _checked(check_secret_value, "jmx.password", env_name, value)
    return value


def _checked(check, *args) -> None:
    """A cluster-settings check whose refusal is said as the console's error."""
    try:
        check(*args)
    except SettingRefused as exc:
        raise ConsoleError(exc.message) from exc


def check_password_env(env_name: str) -> None:
    if env_name:
        _checked(check_secret_env_name, "jmx.password", env_name)


def check_ca_file(path: str) -> None:
    if path:
        _checked(check_cert_file, "jmx.ca_file", path)


def endpoints(source, cluster, brokers: list[tuple[int, str, int]]) -> tuple[list[JmxEndpoint], dict[int, str]]:
    """(each broker's endpoint, with the credentials; broker id -> why it has none) for the cluster registration
    `cluster`. An exporter's host only names a series Prometheus keeps (the credentials go to Prometheus), so only a
    JMX source is held to the registered hosts."""
    password = jmx_password(cluster.name, source.username, source.password_env)
    check_ca_file(source.ca_file)  # again: the folders allowed may have changed since it was set
    hosts = registered_hosts(cluster.bootstrap_servers)
    addresses = jmx_addresses(source.jmx, brokers, hosts if source.kind == "jmx" else None)
    targets = [JmxEndpoint(broker, host, port, username=source.username, password=password, tls=source.tls,
                           ca_file=source.ca_file if source.tls else "")
               for broker, (host, port) in sorted(addresses.found.items())]
    refused = {broker: MSG_UNREGISTERED_HOST.format(broker=broker, host=host, cluster=cluster.name,
                                                    hosts=", ".join(sorted(hosts)) or "none")
               for broker, host in addresses.unregistered.items()}
    return targets, refused
