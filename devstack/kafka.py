"""KRaft Kafka (each node broker + controller) run from the jars Maven fetched into .cache/.

`python -m devstack.kafka run` formats the data folder on first use and then becomes the broker
process (exec), so a process runner can stop it with a signal. With `--brokers 3` (KAFKA_BROKERS=3, for clusters
bigger than one broker's open-file limit allows) it runs a three-node cluster instead, data in .data/kafka-N,
and stays as their parent. Tests use `KafkaNode` and `KafkaCluster` directly.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from devstack.kafka_config import (  # noqa: F401  (tests and benchmarks import these from here)
    FILES_PER_PARTITION, FILES_SPARE, MSG_FEW_FILES, BrokerSecurity, dev_cluster_ports, log4j2_properties,
    new_cluster_id, raise_open_file_limit, server_properties, stored_cluster_id,
)
from devstack.jmx_exporter import ExporterAgent, exporter_options
from devstack.kafka_jmx import (DEV_JMX_PASSWORD_ENV, DEV_JMX_PORT_OFFSET, MSG_NO_DEV_JMX,
                                       MSG_NO_DEV_JMX_PASSWORD, JmxSecurity, dev_jmx_port, dev_jmx_security,
                                       jmx_options)
from devstack.launcher import (  # noqa: F401  (tests take free_port and free_ports from here)
    Watched, free_port, free_ports, java_command, maven_jars, start_logged, stop_process, wait_until_ready,
)
from console.paths import DATA_DIR, KAFKA_LIBS
from devstack.tool_jvm import tool_jvm_options


def java_classpath(libs: Path = KAFKA_LIBS) -> str:
    maven_jars(libs, "kafka_2.13-*.jar", f"Kafka jars are missing in {libs}: run `make deps` (it fetches them with "
                                         "Maven).")
    return f"{libs}/*"


@dataclass
class KafkaNode:
    home: Path
    port: int = 9092
    controller_port: int = 9093
    heap: tuple[str, ...] = ("-Xms256m", "-Xmx768m")
    log_level: str = "WARN"
    offsets_partitions: int = 1
    libs: Path = KAFKA_LIBS
    security: BrokerSecurity | None = None
    # One node alone is its own quorum; KafkaCluster gives each node its id, the shared voters and a rack.
    node_id: int = 1
    quorum_voters: str | None = None
    cluster_id: str | None = None
    rack: str | None = None
    internal_replication: int = 1
    # JMX on 127.0.0.1 (devstack/kafka_jmx.py), for the console's broker metrics and Kafka's JmxTool
    jmx_port: int | None = None
    jmx_security: JmxSecurity | None = None
    # Prometheus's JMX exporter agent in the broker (devstack/jmx_exporter.py), for the Prometheus source
    exporter: ExporterAgent | None = None
    # Log directories beyond the first (data-2, data-3...; the metadata log stays in the first), and settings of a
    # test's own added to server.properties: the log-dir cordoning tests' broker.
    extra_log_dirs: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def config_file(self) -> Path:
        return self.home / "server.properties"

    @property
    def log_dir(self) -> Path:
        return self.home / "data"

    @property
    def log_dirs(self) -> list[Path]:
        return [self.log_dir, *(self.home / f"data-{i + 2}" for i in range(self.extra_log_dirs))]

    def java(self, main: str, *args: str | Path) -> list[str]:
        return java_command(main, *args, heap=self.heap, classpath=java_classpath(self.libs), options=(
            "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}", f"-Dkafka.logs.dir={self.home / 'logs'}"))

    def prepare(self) -> None:
        """Writes the configuration and formats the storage once; later starts keep the data."""
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "logs").mkdir(exist_ok=True)
        self.config_file.write_text(server_properties(
            node_id=self.node_id, port=self.port, controller_port=self.controller_port,
            log_dir=",".join(str(d) for d in self.log_dirs),
            voters=self.quorum_voters or f"{self.node_id}@127.0.0.1:{self.controller_port}",
            offsets_partitions=self.offsets_partitions, internal_replication=self.internal_replication,
            rack=self.rack, security=self.security, extra=self.properties))
        (self.home / "log4j2.properties").write_text(log4j2_properties(self.log_level))
        if (self.log_dir / "meta.properties").exists():
            return
        cluster_id = self.cluster_id or new_cluster_id()
        scram = []
        for user, password in (self.security.scram_users.items() if self.security else ()):
            scram += ["--add-scram", f"SCRAM-SHA-512=[name={user},password={password}]"]
        classpath = java_classpath(self.libs)
        with tool_jvm_options("kafka.tools.StorageTool", classpath, self.libs.parent) as jvm:
            subprocess.run(java_command("kafka.tools.StorageTool", "format", "--cluster-id", cluster_id, "--config",
                                        self.config_file, "--ignore-formatted", *scram, heap=("-Xmx256m",),
                                        classpath=classpath, options=(
                                            *jvm, f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}")),
                           check=True, stdout=subprocess.DEVNULL)

    @property
    def jmx_url(self) -> str | None:
        return f"service:jmx:rmi:///jndi/rmi://127.0.0.1:{self.jmx_port}/jmxrmi" if self.jmx_port else None

    def server_command(self) -> list[str]:
        command = self.java("kafka.Kafka", self.config_file)
        if self.jmx_port:  # the broker only: StorageTool and the tools must not take the port
            command[1:1] = jmx_options(self.jmx_port, self.home, self.jmx_security)
        if self.exporter:
            command[1:1] = exporter_options(self.exporter, self.home)
        return command

    def start(self, *, stdout=None) -> None:
        """Starts the broker with its output to `stdout` (a file already open, or this process's own)."""
        self.prepare()
        warning = raise_open_file_limit(self.log_dir)
        if warning:
            print(warning, file=stdout or sys.stderr, flush=True)
        self.process = start_logged(self.server_command(), stdout)

    def wait_ready(self, timeout: float = 90.0) -> None:
        """Waits until the broker answers a DescribeCluster, failing early if the JVM died."""
        wait_until_ready(_cluster_answers(self.bootstrap, "devstack", brokers=1), what=f"Kafka on {self.bootstrap}",
                         watch=[Watched("Kafka", self.process)], timeout=timeout, interval=0.5)

    def stop(self, timeout: float = 20.0, *, kill: bool = False) -> None:
        """SIGTERM and a wait of `timeout` for the controlled shutdown; `kill` when the data goes away anyway (a
        test session's end: a broker holding a session's thousands of partitions took seconds to close them)."""
        if kill and self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
            return
        stop_process(self.process, timeout=timeout)

    def run_tool(self, main_class: str, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
        """Runs one of Kafka's own command-line tools (TopicCommand, ConsumerGroupCommand...) from the jars, with
        the options of a short-lived JVM (devstack/tool_jvm.py)."""
        classpath = java_classpath(self.libs)
        with tool_jvm_options(main_class, classpath, self.libs.parent) as jvm:
            command = java_command(main_class, *args, heap=("-Xmx256m",), classpath=classpath,
                                   options=(*jvm, f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}"))
            return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def _cluster_answers(bootstrap: str, name: str, *, brokers: int):
    """A readiness check: the cluster at `bootstrap` answers a DescribeCluster listing `brokers` brokers."""
    from gateway.kafka.admin import KafkaAdmin
    from gateway.kafka.errors import KafkaGatewayError
    from gateway.kafka.reset import forget_clients
    from gateway.kafka.types import ClusterConnection

    admin = KafkaAdmin(ClusterConnection(name, bootstrap), timeout=3.0, unreachable_backoff=0.0)

    def answers() -> bool:
        try:
            if len(admin.describe_cluster().brokers) < brokers:
                return False
        except KafkaGatewayError:
            return False
        forget_clients()  # the readiness probe's client must not linger for the code under test
        return True

    return answers


class KafkaCluster:
    """Several KRaft nodes, each broker and controller (a quorum of all of them), one rack each: for the
    replication tests. Stopping one node leaves a quorum."""

    def __init__(self, home: Path, size: int = 3, heap: tuple[str, ...] = ("-Xms128m", "-Xmx384m"), *,
                 ports: list[tuple[int, int]] | None = None, homes: list[Path] | None = None,
                 offsets_partitions: int = 1, log_level: str = "WARN",
                 jmx_ports: list[int | None] | None = None, jmx_security: JmxSecurity | None = None) -> None:
        """`ports` (broker, controller) per node, `jmx_ports` and `homes` default to free ports and `home`/nodeN;
        `make run` gives fixed ones so the `local` cluster's bootstrap stays the same across restarts, and a JMX
        password (`jmx_security`) for every node."""
        if not ports or not jmx_ports:
            chosen = free_ports(3 * size)
            ports = ports or list(zip(chosen[:size], chosen[size:2 * size], strict=True))
            jmx_ports = jmx_ports or chosen[2 * size:]
        homes = homes or [home / f"node{i + 1}" for i in range(size)]
        voters = ",".join(f"{i + 1}@127.0.0.1:{controller}" for i, (_, controller) in enumerate(ports))
        # A node formatted earlier keeps the cluster id in its meta.properties; a new node must join that one.
        cluster_id = next((known for h in homes if (known := stored_cluster_id(h / "data"))), None) or new_cluster_id()
        self.nodes = [KafkaNode(home=node_home, port=port, controller_port=controller, heap=heap,
                                node_id=i + 1, quorum_voters=voters, cluster_id=cluster_id,
                                rack=f"rack-{'abcdefgh'[i]}", internal_replication=min(3, size),
                                offsets_partitions=offsets_partitions, log_level=log_level, jmx_port=jmx_ports[i],
                                jmx_security=jmx_security)
                      for i, ((port, controller), node_home) in enumerate(zip(ports, homes, strict=True))]

    @property
    def bootstrap(self) -> str:
        return ",".join(node.bootstrap for node in self.nodes)

    def node(self, node_id: int) -> KafkaNode:
        return self.nodes[node_id - 1]

    def start(self) -> None:
        for node in self.nodes:  # formatting runs one JVM per node: in turn, then the brokers side by side
            node.prepare()
        for node in self.nodes:
            with open(node.home / "broker.log", "a") as log:
                warning = raise_open_file_limit(node.log_dir)
                if warning:
                    print(warning, file=log, flush=True)
                node.process = start_logged(node.server_command(), log)

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until every node answers and the cluster lists them all."""
        wait_until_ready(_cluster_answers(self.bootstrap, "devstack-cluster", brokers=len(self.nodes)),
                         what=f"the {len(self.nodes)}-node Kafka cluster", timeout=timeout, interval=0.5,
                         watch=[Watched(f"Kafka node {node.node_id}", node.process, node.home / "broker.log")
                                for node in self.nodes])

    def stop(self, *, kill: bool = False) -> None:
        """All nodes at once: one by one, the last ones wait for a quorum that is leaving. `kill` when the data
        goes away anyway (a test session's end)."""
        running = [n.process for n in self.nodes if n.process is not None and n.process.poll() is None]
        for process in running:
            if kill:
                process.kill()
            else:
                process.terminate()
        deadline = time.monotonic() + 15
        for process in running:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


DEV_CLUSTER_OFFSETS_PARTITIONS = 6  # group coordinators spread over the brokers, as on a real cluster
MSG_NODE_DIED = "ERROR Kafka node {node} stopped ({exit}): {error}"


def _forward_node_output(node: KafkaNode, pipe, tail: deque) -> None:
    for raw in iter(lambda: pipe.readline(65536), b""):
        line = raw.decode(errors="replace").rstrip("\n")
        tail.append(line)
        print(f"[kafka-{node.node_id}] {line}", flush=True)
    pipe.close()


def run_cluster(cluster: KafkaCluster) -> int:
    """`make run` with KAFKA_BROKERS > 1: the nodes side by side under this one process, their output prefixed
    with [kafka-N]. When a node dies the others are stopped and this exits 1 with a last line naming the node and
    its error, so keep_running restarts (or gives up on) the cluster as one process and reports that line."""
    from console.process_status import pick_error

    stopping = threading.Event()

    def stop(_signum, _frame) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for node in cluster.nodes:  # formatting runs one JVM per node: in turn, then the brokers side by side
        node.prepare()
    tails: dict[int, deque] = {}
    readers = []
    for node in cluster.nodes:
        print(f"Kafka node {node.node_id} on {node.bootstrap} (controller {node.controller_port}), data in "
              f"{node.log_dir}", flush=True)
        warning = raise_open_file_limit(node.log_dir)
        if warning:
            print(f"[kafka-{node.node_id}] {warning}", flush=True)
        node.process = start_logged(node.server_command(), subprocess.PIPE)
        tails[node.node_id] = deque(maxlen=40)
        readers.append(threading.Thread(target=_forward_node_output, daemon=True,
                                        args=(node, node.process.stdout, tails[node.node_id])))
        readers[-1].start()
    print(f"Kafka cluster of {len(cluster.nodes)} on {cluster.bootstrap}", flush=True)
    dead: KafkaNode | None = None
    while not stopping.wait(0.5):
        dead = next((n for n in cluster.nodes if n.process is not None and n.process.poll() is not None), None)
        if dead is not None:
            break
    cluster.stop()
    for reader in readers:
        reader.join(2)
    if dead is None:
        return 0
    from devstack.keep_running import describe

    print(MSG_NODE_DIED.format(node=dead.node_id, exit=describe(dead.process.returncode),
                               error=pick_error(list(tails[dead.node_id])) or "no output"), flush=True)
    return 1


def _dev_jmx(kafka_port: int, security: JmxSecurity | None) -> int | None:
    """The JMX port of a `make run` broker, or None (said why) when it has no password or its port is taken."""
    if security is None:
        print(MSG_NO_DEV_JMX_PASSWORD.format(port=kafka_port, env=DEV_JMX_PASSWORD_ENV), flush=True)
        return None
    port = dev_jmx_port(kafka_port)
    if port is None:
        print(MSG_NO_DEV_JMX.format(port=kafka_port, jmx=kafka_port + DEV_JMX_PORT_OFFSET), flush=True)
    return port


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("command", choices=["run"])
    parser.add_argument("--home", type=Path, default=DATA_DIR / "kafka",
                        help="the data folder; with several brokers, HOME-1, HOME-2, ...")
    parser.add_argument("--port", type=int, default=int(os.environ.get("KAFKA_PORT", 9092)))
    parser.add_argument("--controller-port", type=int, default=int(os.environ.get("KAFKA_CONTROLLER_PORT", 9093)))
    parser.add_argument("--brokers", type=int, default=int(os.environ.get("KAFKA_BROKERS") or 1))
    parser.add_argument("--heap", default=os.environ.get("KAFKA_HEAP") or "1g", help="each broker's -Xmx")
    args = parser.parse_args(argv)
    home, heap = args.home.resolve(), ("-Xms256m", f"-Xmx{args.heap}")
    security = dev_jmx_security()
    if args.brokers > 1:
        ports = dev_cluster_ports(args.port, args.controller_port, args.brokers)
        jmx_ports = [_dev_jmx(port, security) for port, _ in ports]
        cluster = KafkaCluster(home, size=args.brokers, heap=heap, ports=ports, jmx_ports=jmx_ports,
                               homes=[home.with_name(f"{home.name}-{i + 1}") for i in range(args.brokers)],
                               offsets_partitions=DEV_CLUSTER_OFFSETS_PARTITIONS, jmx_security=security)
        return run_cluster(cluster)
    node = KafkaNode(home=home, port=args.port, controller_port=args.controller_port, heap=heap,
                     jmx_port=_dev_jmx(args.port, security), jmx_security=security)
    node.prepare()
    jmx = f"JMX on 127.0.0.1:{node.jmx_port} for {security.username}" if node.jmx_port else "no JMX"
    print(f"Kafka {KAFKA_LIBS.parent.name} on {node.bootstrap} ({jmx}), data in {node.log_dir}", flush=True)
    warning = raise_open_file_limit(node.log_dir)
    if warning:
        print(warning, flush=True)
    command = node.server_command()
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
