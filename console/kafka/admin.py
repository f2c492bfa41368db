"""KafkaAdmin: every admin operation on one cluster, each bounded by `timeout` seconds, whichever transport
serves it (librdkafka, or Kafka's Java Admin client where librdkafka has no such call): callers cannot tell."""

from __future__ import annotations

from console.kafka.java.ops_group_offsets import GroupOffsetBatchOps
from console.kafka.java.ops_group_types import GroupTypeOps, StreamsGroupOps
from console.kafka.java.ops_jmx import JmxOps
from console.kafka.java.ops_log_dirs import LogDirOps
from console.kafka.java.ops_quotas import QuotaOps
from console.kafka.java.ops_replication import ReplicationOps
from console.kafka.java.ops_topic_ids import TopicIdOps
from console.kafka.java.ops_transactions import TransactionOps
from console.kafka.librdkafka.ops_acls import AclOps
from console.kafka.librdkafka.ops_cluster import ClusterOps
from console.kafka.librdkafka.ops_configs import ConfigOps
from console.kafka.librdkafka.ops_elections import ElectionOps
from console.kafka.librdkafka.ops_groups import GroupOps
from console.kafka.librdkafka.ops_offsets import OffsetOps
from console.kafka.librdkafka.ops_scram import ScramOps
from console.kafka.librdkafka.ops_topics import TopicOps
from console.kafka.records.ops_append import AppendOps
from console.kafka.records.ops_records import RecordOps


class KafkaAdmin(ClusterOps, TopicOps, OffsetOps, ConfigOps, GroupOps, GroupOffsetBatchOps, GroupTypeOps,
                 StreamsGroupOps, LogDirOps, RecordOps, AppendOps, TransactionOps, AclOps, ScramOps, QuotaOps,
                 ElectionOps, ReplicationOps, JmxOps, TopicIdOps):
    """Composes an AdminClient (never exposes it); returns frozen dataclasses; raises console.kafka.errors only.

    This runs librdkafka in the calling process; console.kafka.isolated.IsolatedKafkaAdmin has the same face and
    runs each cluster's calls in a child process."""
