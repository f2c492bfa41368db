"""KRaft Kafka (each node broker + controller) run from the jars Maven fetched into .cache/.

`python -m console.devstack.kafka run` formats the data folder on first use and then becomes the broker
process (exec), so a process runner can stop it with a signal. With `--brokers 3` (KAFKA_BROKERS=3, for clusters
bigger than one broker's open-file limit allows) it runs a three-node cluster instead, data in .data/kafka-N,
and stays as their parent. Tests use `KafkaNode` and `KafkaCluster` directly.
"""

from __future__ import annotations

import argparse
import base64
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from console.devstack.paths import DATA_DIR, KAFKA_LIBS
from console.devstack.tls import TlsFiles

_SERVER_PROPERTIES = """\
process.roles=broker,controller
node.id={node_id}
controller.quorum.voters={voters}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}{extra_listeners}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}{extra_advertised}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT{extra_protocols}
log.dirs={log_dir}
num.partitions=1
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor={internal_replication}
offsets.topic.num.partitions={offsets_partitions}
transaction.state.log.replication.factor={internal_replication}
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor={internal_replication}
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.cleaner.dedupe.buffer.size=1048577
auto.create.topics.enable=false
delete.topic.enable=true
# ACLs are enforced (and can be managed from the console) on every broker; the PLAINTEXT listener's ANONYMOUS
# principal, which the broker itself and local clients use, is a super user.
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users={super_users}
"""

# A SASL_SSL listener (SCRAM-SHA-512) and an SSL listener that requires a client certificate (mTLS), both with
# PEM files from console.devstack.tls. PLAINTEXT stays for the broker's own traffic and test set-up.
_SECURED_PROPERTIES = """\
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PEM
ssl.keystore.location={keystore}
ssl.truststore.type=PEM
ssl.truststore.location={truststore}
listener.name.ssl.ssl.client.auth=required
"""

_LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.out.ref = OUT
logger.kafka.name = kafka
logger.kafka.level = {level}
logger.apache.name = org.apache.kafka
logger.apache.level = {level}
"""


FILES_PER_PARTITION = 3  # a partition's active segment keeps its .log, .index and .timeindex open
FILES_SPARE = 2000  # sockets, jars, the metadata log
MSG_FEW_FILES = ("The broker may open {allowed} files (the hard limit; it cannot be raised without root) and "
                 "{partitions} partition folders in {log_dir} need about {needed}: it may fail with 'Too many open "
                 "files'. Spread them over more brokers or raise the hard limit (Kafka's operations guide asks for "
                 "100,000 or more).")


def raise_open_file_limit(log_dir: Path) -> str | None:
    """Raises this process's soft open-file limit to its hard one (the broker started from it inherits it) and
    returns a warning when even that is below what the partition folders already on disk need."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        partitions = sum(1 for entry in os.scandir(log_dir) if entry.is_dir() and entry.name.rpartition("-")[2].isdigit())
    except FileNotFoundError:
        partitions = 0
    needed = partitions * FILES_PER_PARTITION + FILES_SPARE
    if hard != resource.RLIM_INFINITY and hard < needed:
        return MSG_FEW_FILES.format(allowed=hard, partitions=partitions, log_dir=log_dir, needed=needed)
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_cluster_id() -> str:
    cluster_id = "-"
    while cluster_id.startswith("-"):  # StorageTool would read a leading '-' as an option
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    return cluster_id


def stored_cluster_id(log_dir: Path) -> str | None:
    try:
        lines = (log_dir / "meta.properties").read_text().splitlines()
    except OSError:
        return None
    return next((line.partition("=")[2].strip() for line in lines if line.startswith("cluster.id=")), None)


def dev_cluster_ports(port: int, controller_port: int, brokers: int) -> list[tuple[int, int]]:
    """`make run`'s brokers: node i on port + 2i with its controller on controller_port + 2i (9092/9093,
    9094/9095, 9096/9097 by default); console/settings.py builds the same list for the `local` cluster."""
    return [(port + 2 * i, controller_port + 2 * i) for i in range(brokers)]


def java_classpath(libs: Path = KAFKA_LIBS) -> str:
    if not libs.is_dir() or not any(libs.glob("kafka_2.13-*.jar")):
        raise SystemExit(f"Kafka jars are missing in {libs}: run `make deps` (it fetches them with Maven).")
    return f"{libs}/*"


@dataclass(frozen=True)
class BrokerSecurity:
    """The secured listeners of a test broker and the SCRAM users made when its storage is formatted."""

    sasl_ssl_port: int
    mtls_port: int
    tls: TlsFiles
    scram_users: dict[str, str]
    # The broker's own PLAINTEXT traffic is ANONYMOUS; everyone else needs ACLs.
    super_users: tuple[str, ...] = ("User:ANONYMOUS",)

    @property
    def sasl_ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.sasl_ssl_port}"

    @property
    def mtls_bootstrap(self) -> str:
        return f"127.0.0.1:{self.mtls_port}"


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

    def jvm_args(self) -> list[str]:
        return [
            "java", *self.heap, "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={self.home / 'logs'}",
            "-cp", java_classpath(self.libs),
        ]

    def prepare(self) -> None:
        """Writes the configuration and formats the storage once; later starts keep the data."""
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "logs").mkdir(exist_ok=True)
        secured = self.security
        extra = {"extra_listeners": "", "extra_advertised": "", "extra_protocols": ""}
        if secured is not None:
            added = f",SASL_SSL://127.0.0.1:{secured.sasl_ssl_port},SSL://127.0.0.1:{secured.mtls_port}"
            extra = {"extra_listeners": added, "extra_advertised": added,
                     "extra_protocols": ",SASL_SSL:SASL_SSL,SSL:SSL"}
        properties = _SERVER_PROPERTIES.format(
            port=self.port, controller_port=self.controller_port, log_dir=self.log_dir,
            offsets_partitions=self.offsets_partitions, node_id=self.node_id,
            voters=self.quorum_voters or f"{self.node_id}@127.0.0.1:{self.controller_port}",
            internal_replication=self.internal_replication,
            super_users=";".join(secured.super_users if secured is not None else ("User:ANONYMOUS",)), **extra,
        )
        if self.rack:
            properties += f"broker.rack={self.rack}\n"
        if secured is not None:
            properties += _SECURED_PROPERTIES.format(keystore=secured.tls.broker_keystore, truststore=secured.tls.ca)
        self.config_file.write_text(properties)
        (self.home / "log4j2.properties").write_text(_LOG4J2.format(level=self.log_level))
        if (self.log_dir / "meta.properties").exists():
            return
        cluster_id = self.cluster_id or new_cluster_id()
        scram = []
        for user, password in (self.security.scram_users.items() if self.security else ()):
            scram += ["--add-scram", f"SCRAM-SHA-512=[name={user},password={password}]"]
        subprocess.run(
            [*self.jvm_args(), "kafka.tools.StorageTool", "format", "--cluster-id", cluster_id,
             "--config", str(self.config_file), "--ignore-formatted", *scram],
            check=True, stdout=subprocess.DEVNULL,
        )

    def server_command(self) -> list[str]:
        return [*self.jvm_args(), "kafka.Kafka", str(self.config_file)]

    def start(self, *, stdout=None) -> None:
        self.prepare()
        warning = raise_open_file_limit(self.log_dir)
        if warning:
            print(warning, file=stdout or sys.stderr, flush=True)
        self.process = subprocess.Popen(self.server_command(), stdout=stdout, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 90.0) -> None:
        """Waits until the broker answers a DescribeCluster, failing early if the JVM died."""
        from console.kafka.admin import KafkaAdmin
        from console.kafka.client import forget_clients
        from console.kafka.errors import KafkaGatewayError
        from console.kafka.types import ClusterConnection

        deadline = time.monotonic() + timeout
        admin = KafkaAdmin(ClusterConnection("devstack", self.bootstrap), timeout=3.0, unreachable_backoff=0.0)
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"Kafka exited with code {self.process.returncode} before it was ready")
            try:
                if admin.describe_cluster().brokers:
                    forget_clients()
                    return
            except KafkaGatewayError:
                time.sleep(0.5)
        raise TimeoutError(f"Kafka on {self.bootstrap} not ready after {timeout:.0f} s")

    def stop(self, timeout: float = 20.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def run_tool(self, main_class: str, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
        """Runs one of Kafka's own command-line tools (TopicCommand, ConsumerGroupCommand...) from the jars."""
        command = ["java", "-Xmx256m", f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}",
                   "-cp", java_classpath(self.libs), main_class, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


class KafkaCluster:
    """Several KRaft nodes, each broker and controller (a quorum of all of them), one rack each: for the
    replication tests. Stopping one node leaves a quorum."""

    def __init__(self, home: Path, size: int = 3, heap: tuple[str, ...] = ("-Xms128m", "-Xmx384m"), *,
                 ports: list[tuple[int, int]] | None = None, homes: list[Path] | None = None,
                 offsets_partitions: int = 1, log_level: str = "WARN") -> None:
        """`ports` (broker, controller) per node and `homes` default to free ports and `home`/nodeN; `make run`
        gives fixed ones so the `local` cluster's bootstrap stays the same across restarts."""
        ports = ports or [(free_port(), free_port()) for _ in range(size)]
        homes = homes or [home / f"node{i + 1}" for i in range(size)]
        voters = ",".join(f"{i + 1}@127.0.0.1:{controller}" for i, (_, controller) in enumerate(ports))
        # A node formatted earlier keeps the cluster id in its meta.properties; a new node must join that one.
        cluster_id = next((known for h in homes if (known := stored_cluster_id(h / "data"))), None) or new_cluster_id()
        self.nodes = [KafkaNode(home=node_home, port=port, controller_port=controller, heap=heap,
                                node_id=i + 1, quorum_voters=voters, cluster_id=cluster_id,
                                rack=f"rack-{'abcdefgh'[i]}", internal_replication=min(3, size),
                                offsets_partitions=offsets_partitions, log_level=log_level)
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
                node.process = subprocess.Popen(node.server_command(), stdout=log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until every node answers and the cluster lists them all."""
        from console.kafka.admin import KafkaAdmin
        from console.kafka.client import forget_clients
        from console.kafka.errors import KafkaGatewayError
        from console.kafka.types import ClusterConnection

        deadline = time.monotonic() + timeout
        admin = KafkaAdmin(ClusterConnection("devstack-cluster", self.bootstrap), timeout=3.0, unreachable_backoff=0.0)
        while time.monotonic() < deadline:
            for node in self.nodes:
                if node.process is not None and node.process.poll() is not None:
                    raise RuntimeError(f"Kafka node {node.node_id} exited with code {node.process.returncode}")
            try:
                if len(admin.describe_cluster().brokers) == len(self.nodes):
                    forget_clients()
                    return
            except KafkaGatewayError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"the {len(self.nodes)}-node Kafka cluster was not ready after {timeout:.0f} s")

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
    from console.devstack.process_status import pick_error

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
        node.process = subprocess.Popen(node.server_command(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
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
    from console.devstack.keep_running import describe

    print(MSG_NODE_DIED.format(node=dead.node_id, exit=describe(dead.process.returncode),
                               error=pick_error(list(tails[dead.node_id])) or "no output"), flush=True)
    return 1


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
    if args.brokers > 1:
        cluster = KafkaCluster(home, size=args.brokers, heap=heap,
                               ports=dev_cluster_ports(args.port, args.controller_port, args.brokers),
                               homes=[home.with_name(f"{home.name}-{i + 1}") for i in range(args.brokers)],
                               offsets_partitions=DEV_CLUSTER_OFFSETS_PARTITIONS)
        return run_cluster(cluster)
    node = KafkaNode(home=home, port=args.port, controller_port=args.controller_port, heap=heap)
    node.prepare()
    print(f"Kafka {KAFKA_LIBS.parent.name} on {node.bootstrap}, data in {node.log_dir}", flush=True)
    warning = raise_open_file_limit(node.log_dir)
    if warning:
        print(warning, flush=True)
    command = node.server_command()
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
