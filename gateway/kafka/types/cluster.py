"""The cluster itself: how to reach it, its brokers, its metadata quorum and reassignments."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.kafka.types.topics import PartitionRef


@dataclass(frozen=True)
class ClusterConnection:
    """Everything needed to reach one cluster; `config` already holds secrets resolved from the environment."""

    name: str
    bootstrap_servers: str
    config: Mapping[str, str] = field(default_factory=dict)
    # The cluster's schema registry, if it has one: its URL and the registry client's settings (keys as the
    # confluent-kafka SchemaRegistryClient takes them, e.g. "basic.auth.user.info"), secrets resolved.
    registry_url: str = ""
    registry_config: Mapping[str, str] = field(default_factory=dict)
    # Which of the cluster's client sets a call goes through: "" for pages and commands, BACKGROUND for the lag
    # sweep and the shared tables' rebuilds. Each lane has librdkafka clients and a Java Admin of its own, and by
    # default a client process of its own (gateway/kafka/sandbox/): a broker answers one request of a connection at
    # a time, and a process runs one thread's Python at a time, so a page's small request must queue neither behind
    # a sweep's request for thousands of partitions nor behind the making of its answer.
    lane: str = ""


BACKGROUND = "background"


class GatewayFace:
    """What every gateway implementation holds: the cluster, the bound on each call, the fail-fast window."""

    def __init__(self, connection: ClusterConnection, *, timeout: float, unreachable_backoff: float = 5.0) -> None:
        self.connection = connection
        self.timeout = timeout
        self.unreachable_backoff = unreachable_backoff

    @property
    def cluster(self) -> str:
        return self.connection.name


@dataclass(frozen=True)
class BrokerInfo:
    id: int
    host: str
    port: int
    rack: str | None = None
    is_controller: bool = False


@dataclass(frozen=True)
class ClusterDescription:
    cluster_id: str | None
    controller_id: int | None
    brokers: tuple[BrokerInfo, ...]

    @property
    def broker_count(self) -> int:
        return len(self.brokers)


@dataclass(frozen=True)
class QuorumReplica:
    replica_id: int
    log_end_offset: int
    last_caught_up_ms: int | None  # when it last had the leader's log end; None when the leader does not know


@dataclass(frozen=True)
class QuorumInfo:
    """The KRaft metadata quorum: its leader is the active controller."""

    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[QuorumReplica, ...]
    observers: tuple[QuorumReplica, ...]


@dataclass(frozen=True)
class RegisteredBroker:
    """A broker the controller knows, fenced when it stopped heartbeating (down, or not yet caught up)."""

    id: int
    host: str
    port: int
    rack: str | None
    fenced: bool


@dataclass(frozen=True)
class Reassignment:
    """A partition reassignment in progress: the full replica set during the move, and what joins and leaves."""

    ref: PartitionRef
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


@dataclass(frozen=True)
class FinalizedFeatures:
    """The feature levels the cluster has finalized (DescribeFeatures): what every broker of it now does, whatever
    their software could do. metadata.version's level decides, for one, whether an ACL host may be a CIDR range."""

    levels: Mapping[str, int]

    def level(self, feature: str) -> int | None:
        return self.levels.get(feature)
