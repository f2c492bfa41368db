"""Broker metrics read over JMX: where each broker's JMX answers, and what one reading of it found."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# What may name a JMX host: a DNS name or an IPv4/IPv6 literal. Anything else (spaces, slashes, '@', quotes) would
# reach the JMX service URL the JVM parses, so it is refused before it gets there.
JMX_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
                      r"[A-Za-z0-9])?)*|\[?[0-9A-Fa-f:.]{2,45}\]?)$")
# Kafka's own rule for topic names: the only names that may go into an ObjectName the console builds.
TOPIC_NAME = re.compile(r"^[A-Za-z0-9._-]{1,249}$")

# Why a broker's JMX gave nothing, as its tile says.
JMX_REFUSED, JMX_TIMEOUT, JMX_CREDENTIALS, JMX_TLS, JMX_FAILED = "refused", "timeout", "credentials", "tls", "failed"


@dataclass(frozen=True)
class JmxEndpoint:
    """One broker's JMX agent. The password arrives resolved from the environment and is never shown. With `tls`,
    the agent's certificate is checked against Java's CA certificates and `ca_file` (a PEM file, checked against
    CONSOLE_CLUSTER_CERT_DIRS before it gets here)."""

    broker: int
    host: str
    port: int
    username: str = ""
    password: str = field(default="", repr=False)
    tls: bool = False
    ca_file: str = ""

    @property
    def url(self) -> str:
        host = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"service:jmx:rmi:///jndi/rmi://{host}:{self.port}/jmxrmi"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class MeterReading:
    """A Yammer meter: events since the broker started, and its one-minute moving rate (per second)."""

    count: int
    one_minute_rate: float


@dataclass(frozen=True)
class BrokerJmxReading:
    """What one broker's JMX said at `read_at` (Unix seconds), or why it said nothing (`error`, `error_kind`).

    `gauges` holds gauge values, percentiles (ms) and idle shares (%); `meters` the broker-wide meters; `topics`
    each topic's meters on this broker; `retention_shares` the size of each partition on this broker as a share of
    its retention.bytes (whole percent, topic -> partition -> %), for the partitions above 0 (KIP-1257's gauge, read
    over JMX only). `attributes` is every attribute read, keyed as Kafka's JmxTool prints them
    ("object name:attribute"), for a dump and for comparing with that tool."""

    broker: int
    address: str
    read_at: float
    gauges: dict[str, float] = field(default_factory=dict)
    meters: dict[str, MeterReading] = field(default_factory=dict)
    topics: dict[str, dict[str, MeterReading]] = field(default_factory=dict)
    retention_shares: dict[str, dict[int, int]] = field(default_factory=dict)
    attributes: dict[str, float] = field(default_factory=dict)
    duration_s: float = 0.0
    error: str = ""
    error_kind: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass(frozen=True)
class ClientSoftwareReading:
    """What one broker's socket server counts of its clients (KIP-511): connections open now per client software
    name and version (as each client announced itself in ApiVersions) and listener, summed over the network
    processors. Kafka keeps no such figure per group member, only per broker connection."""

    broker: int
    address: str
    # (software name, software version, listener) -> open connections
    connections: dict[tuple[str, str, str], int] = field(default_factory=dict)
    error: str = ""
    error_kind: str = ""
