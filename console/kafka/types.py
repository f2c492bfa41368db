"""Frozen values the gateway returns: callers never see confluent-kafka objects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


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
class PartitionMetadata:
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    error: str | None = None

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)

    @property
    def offline(self) -> bool:
        return self.leader is None


@dataclass(frozen=True)
class TopicMetadata:
    name: str
    partitions: tuple[PartitionMetadata, ...]
    error: str | None = None
    topic_id: str | None = None
    internal: bool | None = None  # known from DescribeTopics; Metadata from list_topics does not carry it

    @property
    def is_internal(self) -> bool:
        if self.internal is not None:
            return self.internal
        return self.name.startswith("__")

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def replication_factor(self) -> int:
        return max((len(p.replicas) for p in self.partitions), default=0)


@dataclass(frozen=True, order=True)
class PartitionRef:
    """A topic partition, as a dict key or a list item (no tuples with positional meaning)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class OffsetAt:
    """An offset found by ListOffsets; `offset` is -1 when no record matches a timestamp query."""

    offset: int
    timestamp: int | None = None


@dataclass(frozen=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: str


@dataclass(frozen=True)
class ConfigEntryInfo:
    name: str
    value: str | None
    source: str  # one of console.kafka.configs.SOURCE_NAMES values
    is_default: bool
    read_only: bool
    sensitive: bool
    synonyms: tuple[ConfigSynonym, ...] = ()

    @property
    def is_override(self) -> bool:
        return self.source in ("topic", "dynamic-broker", "dynamic-default-broker")

    @property
    def inherited_value(self) -> str | None:
        """The value this entry would have without its own override (the broker's or Kafka's default)."""
        for synonym in self.synonyms:
            if synonym.source != self.source:
                return synonym.value
        return None if self.is_override else self.value


@dataclass(frozen=True)
class RecordInfo:
    topic: str
    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    # Through the cluster's schema registry, when it has one and the bytes are in its wire format.
    key_decoded: DecodedPart | None = None
    value_decoded: DecodedPart | None = None


# Kafka's own names for group states; KIP-848 "Assigning"/"Reconciling" reach librdkafka as "Unknown".
INACTIVE_GROUP_STATES = frozenset({"Empty", "Dead"})


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    state: str
    protocol: str  # "classic", "consumer" or "unknown"
    simple: bool = False
    group_type: str = ""  # classic, consumer, share or streams, when listed by Kafka's own ListGroups (Java)


@dataclass(frozen=True)
class MemberInfo:
    member_id: str
    client_id: str
    host: str
    instance_id: str | None
    assignment: tuple[PartitionRef, ...]
    target_assignment: tuple[PartitionRef, ...] | None = None


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    protocol: str
    assignor: str
    coordinator: BrokerInfo | None
    members: tuple[MemberInfo, ...]
    simple: bool = False

    @property
    def inactive(self) -> bool:
        """Whether offsets may be changed: Kafka's tool allows it only for Empty and Dead groups."""
        return self.state in INACTIVE_GROUP_STATES


@dataclass(frozen=True)
class TransactionListing:
    transactional_id: str
    coordinator: int
    producer_id: int
    state: str  # Kafka's names: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, ...


@dataclass(frozen=True)
class TransactionInfo:
    transactional_id: str
    coordinator: int
    producer_id: int
    producer_epoch: int
    state: str
    timeout_ms: int
    start_time_ms: int | None  # when the open transaction began; None when none is open
    partitions: tuple[PartitionRef, ...]


@dataclass(frozen=True)
class ProducerState:
    """One active producer of a partition, as the partition leader keeps it."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int  # -1 when the leader knows none
    last_sequence: int
    last_timestamp: int
    transaction_start_offset: int | None  # first offset of its open transaction on this partition, if any


# Kafka's names for ACL resource types (librdkafka calls the cluster resource BROKER).
ACL_RESOURCE_TYPES = ("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID")
ACL_PATTERN_TYPES = ("LITERAL", "PREFIXED")
ACL_OPERATIONS = ("ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
                  "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE")
ACL_PERMISSIONS = ("ALLOW", "DENY")


@dataclass(frozen=True, order=True)
class AclEntry:
    """One ACL binding, exactly as the authorizer stores it."""

    principal: str  # "User:alice"
    resource_type: str  # one of ACL_RESOURCE_TYPES
    pattern_type: str  # LITERAL or PREFIXED
    resource_name: str  # "*" for every resource of the type (LITERAL); "kafka-cluster" for CLUSTER
    operation: str
    permission: str
    host: str = "*"


@dataclass(frozen=True)
class AclQuery:
    """Which bindings to list or delete; None matches any. pattern_type MATCH also finds the wildcard and the
    prefixes that cover `resource_name`."""

    principal: str | None = None
    resource_type: str | None = None
    resource_name: str | None = None
    pattern_type: str | None = None
    operation: str | None = None
    permission: str | None = None
    host: str | None = None


@dataclass(frozen=True)
class ScramCredential:
    mechanism: str  # SCRAM-SHA-256 or SCRAM-SHA-512
    iterations: int


@dataclass(frozen=True)
class ScramUser:
    name: str
    credentials: tuple[ScramCredential, ...]


@dataclass(frozen=True)
class ClientQuota:
    """The quotas set on one entity: user and/or client id, each a name, or None for the default entity."""

    user: str | None
    client_id: str | None
    user_is_default: bool
    client_id_is_default: bool
    values: Mapping[str, float]


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
class SchemaInfo:
    """A registered schema as a record refers to it: id, type (AVRO, PROTOBUF, JSON), subject and version."""

    schema_id: int
    schema_type: str
    subject: str
    version: int | None
    text: str


@dataclass(frozen=True)
class SubjectInfo:
    subject: str
    latest_version: int
    schema_id: int
    schema_type: str


@dataclass(frozen=True)
class DecodedPart:
    """A key or value decoded through the schema registry. `value` holds what JSON can (None for kind "hex");
    `error` says why a record in the registry's wire format could not be decoded."""

    kind: str  # avro, protobuf, json-schema, or hex
    value: object
    schema: SchemaInfo | None = None
    error: str = ""


@dataclass(frozen=True)
class ScanFilter:
    """What a search keeps. Text filters look at the decoded JSON of registry records, else at the raw bytes;
    field equalities (dotted paths) and the JSONPath look at the decoded value (registry or plain JSON)."""

    key_contains: str = ""
    key_regex: str = ""
    value_contains: str = ""
    value_regex: str = ""
    value_fields: tuple[tuple[str, str], ...] = ()
    value_jsonpath: str = ""
    header_name: str = ""
    header_contains: str = ""
    ts_from_ms: int | None = None
    ts_to_ms: int | None = None


@dataclass(frozen=True)
class ScanCursor:
    """One partition of a scan over [low, high): `next` is the next offset to read going forwards, or the
    exclusive top of what is left going backwards (newest first)."""

    partition: int
    low: int
    high: int
    next: int

    @property
    def total(self) -> int:
        return max(0, self.high - self.low)


@dataclass(frozen=True)
class ScanRequest:
    scan_id: str
    topic: str
    cursors: tuple[ScanCursor, ...]
    filter: ScanFilter = ScanFilter()
    newest_first: bool = False
    isolation: str = "read_committed"
    max_seconds: float = 1.0
    max_records: int = 10_000_000
    max_matches: int = 500


@dataclass(frozen=True)
class ScanMatch:
    record: RecordInfo
    key: DecodedPart | None = None
    value: DecodedPart | None = None


@dataclass(frozen=True)
class ScanChunk:
    cursors: tuple[ScanCursor, ...]
    matches: tuple[ScanMatch, ...]
    scanned: int
    done: bool


@dataclass(frozen=True)
class ProducedRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int


@dataclass(frozen=True)
class ReplicaSize:
    """One replica's bytes on disk (DescribeLogDirs); `future` marks a copy being moved to another log dir."""

    ref: PartitionRef
    broker: int
    log_dir: str
    size: int
    offset_lag: int
    future: bool = False


@dataclass(frozen=True)
class ShareMember:
    member_id: str
    client_id: str
    host: str
    member_epoch: int
    assignment: tuple[PartitionRef, ...]


@dataclass(frozen=True)
class ShareGroupDescription:
    group_id: str
    state: str
    coordinator: int | None
    group_epoch: int
    assignment_epoch: int
    members: tuple[ShareMember, ...]


@dataclass(frozen=True)
class SharePartitionOffset:
    """A share group's start offset on one partition (the next offset to deliver), as kafka-share-groups shows it."""

    ref: PartitionRef
    start_offset: int | None
    leader_epoch: int | None
    lag: int | None


@dataclass(frozen=True)
class StreamsSubtopology:
    subtopology_id: str
    source_topics: tuple[str, ...]
    repartition_sink_topics: tuple[str, ...]
    changelog_topics: tuple[str, ...]
    repartition_source_topics: tuple[str, ...]


@dataclass(frozen=True)
class StreamsMember:
    member_id: str
    client_id: str
    host: str
    process_id: str
    member_epoch: int
    # (subtopology id, partitions) per kind of task
    active_tasks: tuple[tuple[str, tuple[int, ...]], ...]
    standby_tasks: tuple[tuple[str, tuple[int, ...]], ...]
    warmup_tasks: tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True)
class StreamsGroupDescription:
    group_id: str
    state: str
    coordinator: int | None
    group_epoch: int
    assignment_epoch: int
    topology_epoch: int
    subtopologies: tuple[StreamsSubtopology, ...]
    members: tuple[StreamsMember, ...]


@dataclass(frozen=True)
class CommittedTail:
    """Where a partition stands for a read_committed reader: its log start, its last stable offset (the end such
    a reader sees; below `log_end` while a transaction is open), its log end, and the last committed record below
    the stable end (None when there is none)."""

    log_start: int
    stable_end: int
    log_end: int
    last: RecordInfo | None


@dataclass(frozen=True)
class AppendResult:
    """What a conditional append did: `appended` False means nothing was written, because the partition's last
    committed record was not the one expected, or because `held_at` is set: a transaction this writer did not start
    (another writer's, or one the coordinator lost track of in a broker crash) holds the stable end at that
    offset. `last` is the partition's last committed record afterwards."""

    appended: bool
    last: RecordInfo | None
    held_at: int | None = None
