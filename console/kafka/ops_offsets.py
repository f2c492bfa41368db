"""Log start, log end and timestamp lookups, many partitions per request."""

from __future__ import annotations

from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from console.kafka.base import AdminBase
from console.kafka.types import OffsetAt, PartitionRef

EARLIEST, LATEST = "earliest", "latest"


def _spec(at: str | int) -> OffsetSpec:
    if at == EARLIEST:
        return OffsetSpec.earliest()
    if at == LATEST:
        return OffsetSpec.latest()
    return OffsetSpec.for_timestamp(int(at))


class OffsetOps(AdminBase):
    def list_offsets(self, refs: list[PartitionRef], at: str | int) -> dict[PartitionRef, OffsetAt]:
        """One ListOffsets round for all `refs`; `at` is "earliest", "latest" or a timestamp in ms.

        Read-uncommitted, like Kafka's own tools, so "latest" is the high watermark.
        """
        return self.list_offsets_many(refs, [at])[at]

    def list_offsets_many(self, refs: list[PartitionRef], ats: list[str | int]) -> dict[str | int, dict[PartitionRef, OffsetAt]]:
        """Several ListOffsets rounds sent together (e.g. earliest and latest), then waited for together."""

        def run(admin: AdminClient) -> dict[str | int, dict[PartitionRef, OffsetAt]]:
            if not refs:
                return {at: {} for at in ats}
            pending = {
                at: admin.list_offsets({TopicPartition(r.topic, r.partition): _spec(at) for r in refs},
                                       request_timeout=self.timeout)
                for at in ats
            }
            results: dict[str | int, dict[PartitionRef, OffsetAt]] = {}
            for at, futures in pending.items():
                outcomes = self._wait_each({PartitionRef(tp.topic, tp.partition): f for tp, f in futures.items()})
                self._raise_partition_failures(outcomes)
                results[at] = {
                    ref: OffsetAt(offset=o.offset, timestamp=o.timestamp if (o.timestamp or -1) >= 0 else None)
                    for ref, o in outcomes.items()
                }
            return results

        return self._call(run)
