"""Which JMX address each broker has, from a source's spec (pure), and the credentials from the environment."""

from __future__ import annotations

import os
import re

from console.clusters.client_settings import SettingRefused, check_cert_file, check_secret_env_name, check_secret_value
from console.errors import ConsoleError
from console.kafka.types import JmxEndpoint
from console.kafka.types.metrics import JMX_HOST

MSG_SPEC = ("JMX addresses are '+OFFSET' (each broker's host, its Kafka port plus OFFSET), ':PORT' (each broker's host, "
            "that port) or 'ID=HOST:PORT,...' per broker; '{spec}' is none of these.")
MSG_HOST = "'{host}' is not a host name or IP address."
MSG_NO_PASSWORD = "The JMX password of cluster '{cluster}' is read from ${env}, which is not set."
_OFFSET = re.compile(r"^\+(\d{1,5})$")
_PORT = re.compile(r"^:(\d{1,5})$")
_ONE = re.compile(r"^(\d{1,9})=(\[[0-9A-Fa-f:.]+\]|[^:\s]+):(\d{1,5})$")


def _port(text: str, spec: str) -> int:
    port = int(text)
    if not 0 < port < 65536:
        raise ConsoleError(MSG_SPEC.format(spec=spec))
    return port


def parse_jmx_spec(spec: str) -> tuple[str, object]:
    """("offset", n) | ("port", n) | ("brokers", {id: (host, port)}); ConsoleError for anything else."""
    spec = (spec or "").strip()
    if m := _OFFSET.match(spec):
        return "offset", int(m[1])
    if m := _PORT.match(spec):
        return "port", _port(m[1], spec)
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


def jmx_addresses(spec: str, brokers: list[tuple[int, str, int]]) -> dict[int, tuple[str, int]]:
    """broker id -> (host, port) for the brokers Kafka lists ((id, host, Kafka port)); an explicit list is used as
    it is, so a broker that is down still gets its tile."""
    kind, value = parse_jmx_spec(spec)
    if kind == "brokers":
        return dict(value)
    found = {}
    for broker, host, port in brokers:
        jmx_port = port + value if kind == "offset" else value
        if JMX_HOST.match(host) and 0 < jmx_port < 65536:
            found[broker] = (host, jmx_port)
    return found


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


def endpoints(source, cluster: str, brokers: list[tuple[int, str, int]]) -> list[JmxEndpoint]:
    password = jmx_password(cluster, source.username, source.password_env)
    check_ca_file(source.ca_file)  # again: the folders allowed may have changed since it was set
    return [JmxEndpoint(broker, host, port, username=source.username, password=password, tls=source.tls,
                        ca_file=source.ca_file if source.tls else "")
            for broker, (host, port) in sorted(jmx_addresses(source.jmx, brokers).items())]
