"""The gateway's vocabulary: frozen values it returns (callers never see confluent-kafka or Java objects) and the
names callers pass it. One module per concern; every name is also importable from here, where its callers
(every app, and Spark's executors) have always found it."""

from gateway.kafka.types.access import (ACL_OPERATIONS, ACL_PATTERN_TYPES, ACL_PERMISSIONS, ACL_RESOURCE_TYPES,
                                        SCRAM_MECHANISMS, AclEntry, AclQuery, ClientQuota, ScramCredential, ScramUser)
from gateway.kafka.types.cluster import (BACKGROUND, BrokerInfo, ClusterConnection, ClusterDescription,
                                         FinalizedFeatures, GatewayFace, QuorumInfo, QuorumReplica, Reassignment,
                                         RegisteredBroker)
from gateway.kafka.types.groups import (INACTIVE_GROUP_STATES, GroupDescription, GroupListing, MemberInfo,
                                        ProtocolGroupDescription, ProtocolMember, ShareGroupDescription, ShareMember,
                                        SharePartitionOffset, StreamsGroupDescription, StreamsMember, StreamsSubtopology)
from gateway.kafka.types.metrics import (JMX_CREDENTIALS, JMX_FAILED, JMX_REFUSED, JMX_TIMEOUT, JMX_TLS,
                                         BrokerJmxReading, ClientSoftwareReading, JmxEndpoint, MeterReading)
from gateway.kafka.types.records import (AppendResult, BatchWritten, CommittedTail, DecodedPart, OutgoingRecord,
                                         ProducedRecord, RecordInfo,
                                         ScanChunk, ScanCursor, ScanFilter, ScanMatch, ScanRequest, SchemaInfo,
                                         SubjectInfo)
from gateway.kafka.types.topics import (BROKER, EARLIEST, LATEST, STABLE, TOPIC, ConfigEntryInfo, ConfigSynonym,
                                        ItemFailure, LogDirState, OffsetAt, PartitionMetadata, PartitionRef,
                                        ReplicaSize, TopicMetadata)
from gateway.kafka.types.transactions import ProducerState, TransactionInfo, TransactionListing

__all__ = [
    "ACL_OPERATIONS", "ACL_PATTERN_TYPES", "ACL_PERMISSIONS", "ACL_RESOURCE_TYPES", "SCRAM_MECHANISMS", "AclEntry",
    "AclQuery", "ClientQuota", "ScramCredential", "ScramUser",
    "BACKGROUND", "BrokerInfo", "ClusterConnection", "ClusterDescription", "FinalizedFeatures", "GatewayFace", "QuorumInfo",
    "QuorumReplica", "Reassignment", "RegisteredBroker",
    "INACTIVE_GROUP_STATES", "GroupDescription", "GroupListing", "MemberInfo", "ProtocolGroupDescription",
    "ProtocolMember", "ShareGroupDescription", "ShareMember",
    "SharePartitionOffset", "StreamsGroupDescription", "StreamsMember", "StreamsSubtopology",
    "JMX_CREDENTIALS", "JMX_FAILED", "JMX_REFUSED", "JMX_TIMEOUT", "JMX_TLS", "BrokerJmxReading", "ClientSoftwareReading",
    "JmxEndpoint",
    "MeterReading",
    "AppendResult", "BatchWritten", "CommittedTail", "DecodedPart", "OutgoingRecord", "ProducedRecord",
    "RecordInfo", "ScanChunk", "ScanCursor",
    "ScanFilter", "ScanMatch", "ScanRequest", "SchemaInfo", "SubjectInfo",
    "BROKER", "EARLIEST", "LATEST", "STABLE", "TOPIC", "ConfigEntryInfo", "ConfigSynonym", "ItemFailure", "LogDirState",
    "OffsetAt", "PartitionMetadata", "PartitionRef", "ReplicaSize", "TopicMetadata",
    "ProducerState", "TransactionInfo", "TransactionListing",
]
