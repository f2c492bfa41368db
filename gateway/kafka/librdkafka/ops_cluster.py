"""DescribeCluster: who the cluster is and which brokers it has."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient

from gateway.kafka.librdkafka.base import AdminBase
from gateway.kafka.types import BrokerInfo, ClusterDescription


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
