"""DescribeLogDirs, through Kafka's Java Admin client (librdkafka has no such call): bytes on disk per replica, and
each log directory's state (cordoned or not, what it holds, its volume's space)."""

from __future__ import annotations

import re

from gateway.kafka.errors import KafkaRequestFailed
from gateway.kafka.java import bridge
from gateway.kafka.types import LogDirState, PartitionRef, ReplicaSize

# One Java call per log dir hands back its whole replica map as text, instead of a py4j round trip per replica:
# a topic name holds only [a-zA-Z0-9._-], so "name-partition=ReplicaInfo(...)" parses without ambiguity.
_REPLICA = re.compile(r"([A-Za-z0-9._-]+)-(\d+)=ReplicaInfo\(size=(\d+), offsetLag=(-?\d+), isFuture=(true|false)\)")


def parse_replica_infos(text: str) -> list[tuple[PartitionRef, int, int, bool]]:
    return [(PartitionRef(m[1], int(m[2])), int(m[3]), int(m[4]), m[5] == "true") for m in _REPLICA.finditer(text)]


class LogDirOps(bridge.JavaCalls):
    def describe_log_dirs(self, broker_ids: list[int]) -> list[ReplicaSize]:
        """Every replica in every log dir of the given brokers (one DescribeLogDirs request to each)."""
        if not broker_ids:
            return []
        found = self._java(lambda admin, jvm: admin.describeLogDirs(list(broker_ids)).allDescriptions())
        sizes = []
        for broker in found.keySet():
            dirs = found.get(broker)
            for log_dir in dirs.keySet():
                description = dirs.get(log_dir)
                if description.error() is not None:
                    raise KafkaRequestFailed(f"Broker {broker} could not describe {log_dir}: "
                                             f"{description.error().getMessage()}", cluster=self.cluster)
                for ref, size, lag, future in parse_replica_infos(str(description.replicaInfos().toString())):
                    sizes.append(ReplicaSize(ref=ref, broker=int(broker), log_dir=str(log_dir), size=size,
                                             offset_lag=lag, future=future))
        return sorted(sizes, key=lambda s: (s.ref, s.broker))

    def describe_log_dir_states(self, broker_ids: list[int]) -> list[LogDirState]:
        """Each log directory of the given brokers (one DescribeLogDirs request to each): cordoned or not, its
        replicas and their bytes; a directory the broker cannot use comes back with the broker's error."""
        if not broker_ids:
            return []
        found = self._java(lambda admin, jvm: admin.describeLogDirs(list(broker_ids)).allDescriptions())
        states = []
        for broker in found.keySet():
            dirs = found.get(broker)
            for log_dir in dirs.keySet():
                description = dirs.get(log_dir)
                error = description.error()
                text = "" if error is not None else str(description.replicaInfos().toString())
                replicas = [(size, future) for _, size, _, future in parse_replica_infos(text)]
                total, usable = description.totalBytes(), description.usableBytes()
                states.append(LogDirState(
                    broker=int(broker), path=str(log_dir), cordoned=bool(description.isCordoned()),
                    replicas=sum(1 for _, future in replicas if not future),
                    size=sum(size for size, future in replicas if not future),
                    total_bytes=int(total.getAsLong()) if total.isPresent() else None,
                    usable_bytes=int(usable.getAsLong()) if usable.isPresent() else None,
                    error="" if error is None else str(error.getMessage() or error.getClass().getSimpleName())))
        return sorted(states, key=lambda s: (s.broker, s.path))
