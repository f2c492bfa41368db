"""KafkaAdmin: every admin operation on one cluster, each bounded by `timeout` seconds."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient

from console.kafka.base import AdminBase
from console.kafka.ops_acls import AclOps
from console.kafka.ops_append import AppendOps
from console.kafka.ops_configs import ConfigOps
from console.kafka.ops_group_offsets import GroupOffsetBatchOps
from console.kafka.ops_group_types import GroupTypeOps, StreamsGroupOps
from console.kafka.ops_groups import GroupOps
from console.kafka.ops_log_dirs import LogDirOps
from console.kafka.ops_offsets import OffsetOps
from console.kafka.ops_quotas import QuotaOps
from console.kafka.ops_records import RecordOps
from console.kafka.ops_replication import ReplicationOps
from console.kafka.ops_scram import ScramOps
from console.kafka.ops_topics import TopicOps
from console.kafka.ops_transactions import TransactionOps
from console.kafka.types import BrokerInfo, ClusterDescription


class ClusterOps(AdminBase):
    def describe_cluster(self) -> ClusterDescription:
        """DescribeCluster: cluster id, controller and live brokers."""

        def run(admin: AdminClient) -> ClusterDescription:
            result = self._wait(admin.describe_cluster(request_timeout=self.timeout))
            controller_id = result.controller.id if result.controller is not None else None
            brokers = tuple(sorted(
                (BrokerInfo(id=n.id, host=n.host, port=n.port, rack=n.rack, is_controller=n.id == controller_id)
                 for n in result.nodes),
                key=lambda b: b.id,
            ))
            return ClusterDescription(cluster_id=result.cluster_id, controller_id=controller_id, brokers=brokers)

        return self._call(run)


class KafkaAdmin(ClusterOps, TopicOps, OffsetOps, ConfigOps, GroupOps, GroupOffsetBatchOps, GroupTypeOps,
                 StreamsGroupOps, LogDirOps, RecordOps, AppendOps, TransactionOps, AclOps, ScramOps, QuotaOps,
                 ReplicationOps):
    """Composes an AdminClient (never exposes it); returns frozen dataclasses; raises console.kafka.errors only.

    This runs librdkafka in the calling process; console.kafka.isolated.IsolatedKafkaAdmin has the same face and
    runs each cluster's calls in a child process."""
