"""Prometheus's JMX exporter agent on a dev-stack broker, for the Prometheus metrics source.

The agent runs inside the broker's JVM and serves the MBeans it is told to include over HTTP on loopback, behind a
user and password. Its names are left at the agent's defaults (`<domain>_<type>_<attribute>`, other key properties as
labels), which is what the console's Prometheus reader expects (gateway/kafka/prometheus.py); only the MBeans the
console reads are included, so a scrape stays small however many topics the broker has."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from console.paths import CACHE_DIR

JMX_EXPORTER_VERSION = "1.0.1"
JMX_EXPORTER_JAR = CACHE_DIR / "jmx-exporter" / "libs" / f"jmx_prometheus_javaagent-{JMX_EXPORTER_VERSION}.jar"
MSG_NO_AGENT = f"Prometheus's JMX exporter agent is missing ({JMX_EXPORTER_JAR}): run `make test-deps`."
# The object names (patterns) the console's broker metrics come from: gateway/kafka/broker_mbeans.py.
INCLUDED = ("kafka.server:type=BrokerTopicMetrics,*", "kafka.network:type=RequestMetrics,name=RequestsPerSec,*",
            "kafka.network:type=RequestMetrics,name=TotalTimeMs,*", "kafka.server:type=ReplicaManager,*",
            "kafka.server:type=KafkaRequestHandlerPool,*", "kafka.network:type=SocketServer,*",
            "kafka.controller:type=KafkaController,*")


@dataclass(frozen=True)
class ExporterAgent:
    """The agent's port on 127.0.0.1 and the user Prometheus scrapes it as."""

    port: int
    username: str
    password: str


def exporter_options(agent: ExporterAgent, home: Path) -> list[str]:
    """The broker's JVM option that loads the agent (its configuration written, owner-only, under `home`)."""
    if not JMX_EXPORTER_JAR.is_file():
        raise SystemExit(MSG_NO_AGENT)
    folder = home / "jmx-exporter"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    config = folder / "exporter.yml"
    # JSON is YAML: no YAML writer needed, and every value is quoted as it must be.
    config.write_text(json.dumps({
        "includeObjectNames": list(INCLUDED),
        "httpServer": {"authentication": {"basic": {"username": agent.username, "password": agent.password}}},
    }, indent=2))
    config.chmod(0o600)
    return [f"-javaagent:{JMX_EXPORTER_JAR}=127.0.0.1:{agent.port}:{config}"]
