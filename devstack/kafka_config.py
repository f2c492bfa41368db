"""What a KRaft node of the dev stack is made of on disk: its server.properties and log4j2 configuration, its
cluster id, and the open files its partition folders will need."""

from __future__ import annotations

import base64
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from devstack.tls import TlsFiles

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
# Members of consumer (KIP-848), share and streams groups receive their assignment with a heartbeat: every second
# here rather than Kafka's five, so a development broker's groups settle as quickly as its classic ones (above).
group.consumer.min.heartbeat.interval.ms=1000
group.consumer.heartbeat.interval.ms=1000
group.share.min.heartbeat.interval.ms=1000
group.share.heartbeat.interval.ms=1000
group.streams.min.heartbeat.interval.ms=1000
group.streams.heartbeat.interval.ms=1000
log.cleaner.dedupe.buffer.size=1048577
auto.create.topics.enable=false
delete.topic.enable=true
# ACLs are enforced (and can be managed from the console) on every broker; the PLAINTEXT listener's ANONYMOUS
# principal, which the broker itself and local clients use, is a super user.
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users={super_users}
"""

# A SASL_SSL listener (SCRAM-SHA-512) and an SSL listener that requires a client certificate (mTLS), both with
# PEM files from devstack.tls. PLAINTEXT stays for the broker's own traffic and test set-up.
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
        partitions = sum(1 for entry in os.scandir(log_dir)
                         if entry.is_dir() and entry.name.rpartition("-")[2].isdigit())
    except FileNotFoundError:
        partitions = 0
    needed = partitions * FILES_PER_PARTITION + FILES_SPARE
    if hard != resource.RLIM_INFINITY and hard < needed:
        return MSG_FEW_FILES.format(allowed=hard, partitions=partitions, log_dir=log_dir, needed=needed)
    return None


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


def server_properties(*, node_id: int, port: int, controller_port: int, log_dir: Path | str, voters: str,
                      offsets_partitions: int, internal_replication: int, rack: str | None,
                      security: BrokerSecurity | None, extra: dict[str, str] | None = None) -> str:
    """`log_dir` is log.dirs (one folder, or several separated by commas); `extra` adds settings of a test's own."""
    listeners = {"extra_listeners": "", "extra_advertised": "", "extra_protocols": ""}
    if security is not None:
        added = f",SASL_SSL://127.0.0.1:{security.sasl_ssl_port},SSL://127.0.0.1:{security.mtls_port}"
        listeners = {"extra_listeners": added, "extra_advertised": added,
                     "extra_protocols": ",SASL_SSL:SASL_SSL,SSL:SSL"}
    properties = _SERVER_PROPERTIES.format(
        port=port, controller_port=controller_port, log_dir=log_dir, offsets_partitions=offsets_partitions,
        node_id=node_id, voters=voters, internal_replication=internal_replication,
        super_users=";".join(security.super_users if security is not None else ("User:ANONYMOUS",)), **listeners,
    )
    if rack:
        properties += f"broker.rack={rack}\n"
    if security is not None:
        properties += _SECURED_PROPERTIES.format(keystore=security.tls.broker_keystore, truststore=security.tls.ca)
    properties += "".join(f"{key}={value}\n" for key, value in (extra or {}).items())
    return properties


def log4j2_properties(level: str) -> str:
    return _LOG4J2.format(level=level)
