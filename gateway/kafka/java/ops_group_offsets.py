"""Committed offsets of many consumer groups in few requests, through Kafka's Java Admin client.

librdkafka's list_consumer_group_offsets takes one group per request, so 50,000 groups cost 50,000 OffsetFetch
requests. Since KIP-709 (OffsetFetch v8) one request carries many groups, and the Java Admin sends one per group
coordinator for every group it is given; the lag sweep uses this, in bounded batches.
"""

from __future__ import annotations

from gateway.kafka.java import bridge
from gateway.kafka.types import PartitionRef

_SPEC_CLASS = "org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec"


class GroupOffsetBatchOps(bridge.JavaCalls):

    def group_offsets_batched(self, group_ids: list[str]) -> dict[str, dict[PartitionRef, int]]:
        """OffsetFetch for all of `group_ids`, one request per coordinator. The ids cross the bridge as one JSON
        text and the offsets come back as one, so a batch costs a few gateway round trips whatever its size.
        A group that fails (not authorized, say) fails the batch: callers that must not lose the others fall
        back to KafkaAdmin.group_offsets for it. Partitions without a commit are left out, as group_offsets does."""
        if not group_ids:
            return {}
        # An empty spec asks for every partition the group committed on.
        specs = {group_id: {} for group_id in dict.fromkeys(group_ids)}

        def call(admin, jvm):
            return admin.listConsumerGroupOffsets(bridge.string_keyed_map(specs, _SPEC_CLASS)).all()

        found = bridge.as_plain(self._java(call))
        return {group_id: {bridge.partition_ref(key): int(committed["offset"])
                           for key, committed in (found.get(group_id) or {}).items()
                           if committed is not None and int(committed["offset"]) >= 0}
                for group_id in specs}
