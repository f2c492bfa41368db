"""Leader elections (ElectLeaders); the rest of replication needs Kafka's Java Admin client
(gateway.kafka.java.ops_replication)."""

from __future__ import annotations

from confluent_kafka import ElectionType, TopicPartition
from confluent_kafka.admin import AdminClient

from gateway.kafka.librdkafka.base import AdminBase
from gateway.kafka.types import PartitionRef


class ElectionOps(AdminBase):
    def elect_preferred_leaders(self, refs: list[PartitionRef]) -> dict[PartitionRef, str | None]:
        """Preferred leader election for these partitions: each one's error, or None where it now leads (or
        already did: Kafka answers ELECTION_NOT_NEEDED, which is no error here)."""

        def run(admin: AdminClient) -> dict[PartitionRef, str | None]:
            if not refs:
                return {}
            partitions = [TopicPartition(r.topic, r.partition) for r in refs]
            # confluent-kafka 2.16.1's native call fails on either documented timeout keyword ("more argument
            # specifiers than keyword list entries"); our wait bounds the call instead.
            result = self._wait(admin.elect_leaders(ElectionType.PREFERRED, partitions))
            outcome = {}
            for tp, error in result.items():
                err = getattr(error, "args", [None])[0] if error is not None else None
                name = err.name() if err is not None and hasattr(err, "name") else (str(error) if error else None)
                outcome[PartitionRef(tp.topic, tp.partition)] = None if name in (None, "ELECTION_NOT_NEEDED") else (
                    err.str() if err is not None and hasattr(err, "str") else name)
            return outcome

        return self._call(run)
