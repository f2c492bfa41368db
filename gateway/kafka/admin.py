"""KafkaAdmin: every admin operation on one cluster, each bounded by `timeout` seconds, whichever transport
serves it (librdkafka, or Kafka's Java Admin client where librdkafka has no such call): callers cannot tell."""

from __future__ import annotations

from gateway.kafka.java.ops_client_software import ClientSoftwareOps
from gateway.kafka.java.ops_features import FeatureOps
from gateway.kafka.java.ops_group_offsets import GroupOffsetBatchOps
from gateway.kafka.java.ops_group_protocols import GroupProtocolOps
from gateway.kafka.java.ops_group_types import GroupTypeOps, StreamsGroupOps
from gateway.kafka.java.ops_jmx import JmxOps
from gateway.kafka.java.ops_log_dirs import LogDirOps
from gateway.kafka.java.ops_quotas import QuotaOps
from gateway.kafka.java.ops_replication import ReplicationOps
from gateway.kafka.java.ops_topic_ids import TopicIdOps
from gateway.kafka.java.ops_transactions import TransactionOps
from gateway.kafka.librdkafka.ops_acls import AclOps
from gateway.kafka.librdkafka.ops_cluster import ClusterOps
from gateway.kafka.librdkafka.ops_configs import ConfigOps
from gateway.kafka.librdkafka.ops_elections import ElectionOps
from gateway.kafka.librdkafka.ops_groups import GroupOps
from gateway.kafka.librdkafka.ops_offsets import OffsetOps
from gateway.kafka.librdkafka.ops_scram import ScramOps
from gateway.kafka.librdkafka.ops_topics import TopicOps
from gateway.kafka.records_io.ops_append import AppendOps
from gateway.kafka.records_io.ops_records import RecordOps


class KafkaAdmin(ClusterOps, TopicOps, OffsetOps, ConfigOps, GroupOps, GroupOffsetBatchOps, GroupTypeOps,
                 StreamsGroupOps, LogDirOps, RecordOps, AppendOps, TransactionOps, AclOps, ScramOps, QuotaOps,
                 ElectionOps, ReplicationOps, JmxOps, TopicIdOps, GroupProtocolOps, ClientSoftwareOps, FeatureOps):
    """Composes an AdminClient (never exposes it); returns frozen dataclasses; raises gateway.kafka.errors only.

    This runs librdkafka in the calling process; gateway.kafka.isolated.IsolatedKafkaAdmin has the same face and
    runs each cluster's calls in a child process."""
