"""Partition reassignments, the metadata quorum and the registered brokers, through Kafka's Java Admin client:
librdkafka has none of these (its leader elections are in gateway.kafka.librdkafka.ops_elections)."""

from __future__ import annotations

from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.java import bridge
from gateway.kafka.types import PartitionRef, QuorumInfo, QuorumReplica, Reassignment, RegisteredBroker


def _optional_long(value) -> int | None:
    return int(value.getAsLong()) if value.isPresent() else None


def _ints(java_list) -> tuple[int, ...]:
    return tuple(int(x) for x in java_list)


class ReplicationOps(bridge.JavaCalls):
    def list_reassignments(self) -> list[Reassignment]:
        found = self._java(lambda admin, jvm: admin.listPartitionReassignments().reassignments())
        return sorted((Reassignment(ref=PartitionRef(str(tp.topic()), int(tp.partition())),
                                    replicas=_ints(found.get(tp).replicas()),
                                    adding=_ints(found.get(tp).addingReplicas()),
                                    removing=_ints(found.get(tp).removingReplicas())) for tp in found.keySet()),
                      key=lambda r: r.ref)

    def alter_reassignments(self, targets: dict[PartitionRef, tuple[int, ...] | None]) -> dict[PartitionRef, str | None]:
        """Starts moving each partition to its target replicas (the first one is the preferred leader), or cancels
        its reassignment in progress (None). Returns each partition's error, or None."""
        if not targets:
            return {}
        admin = bridge.java_admin(self.connection, self.timeout)
        jvm = bridge.jvm()
        Optional = jvm.java.util.Optional
        changes = jvm.java.util.HashMap()
        keys = {}
        for ref, replicas in targets.items():
            tp = jvm.org.apache.kafka.common.TopicPartition(ref.topic, ref.partition)
            keys[ref] = tp
            changes.put(tp, Optional.empty() if replicas is None else Optional.of(
                jvm.org.apache.kafka.clients.admin.NewPartitionReassignment(list(replicas))))
        values = admin.alterPartitionReassignments(changes).values()
        outcome: dict[PartitionRef, str | None] = {}
        for ref, tp in keys.items():
            try:
                bridge.wait(values.get(tp), cluster=self.cluster, timeout=self.timeout, admin=admin)
                outcome[ref] = None
            except KafkaGatewayError as exc:
                outcome[ref] = exc.message
        return outcome

    def describe_quorum(self) -> QuorumInfo:
        info = self._java(lambda admin, jvm: admin.describeMetadataQuorum().quorumInfo())

        def replicas(java_list):
            return tuple(sorted((QuorumReplica(replica_id=int(r.replicaId()), log_end_offset=int(r.logEndOffset()),
                                               last_caught_up_ms=_optional_long(r.lastCaughtUpTimestamp()))
                                 for r in java_list), key=lambda r: r.replica_id))

        return QuorumInfo(leader_id=int(info.leaderId()), leader_epoch=int(info.leaderEpoch()),
                          high_watermark=int(info.highWatermark()), voters=replicas(info.voters()),
                          observers=replicas(info.observers()))

    def describe_registered_brokers(self) -> list[RegisteredBroker]:
        """Every broker the controller has registered, fenced ones included (KIP-1073)."""

        def call(admin, jvm):
            options = jvm.org.apache.kafka.clients.admin.DescribeClusterOptions().includeFencedBrokers(True)
            return admin.describeCluster(options).nodes()

        nodes = self._java(call)
        return sorted((RegisteredBroker(id=int(n.id()), host=str(n.host()), port=int(n.port()),
                                        rack=str(n.rack()) if n.hasRack() else None, fenced=bool(n.isFenced()))
                       for n in nodes), key=lambda b: b.id)
