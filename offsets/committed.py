"""Committed offsets of many consumer groups at once: what the lag sweep and the groups list ask.

Kafka's Java Admin puts every group of one coordinator in a single OffsetFetch (KIP-709); librdkafka takes one
group per request. The Java call is tried first; when it fails for a reason other than the cluster not answering
(a group the console may not describe fails the whole request, or Kafka's Java clients are missing), the groups
are asked again one per request, so one group cannot cost the others.
"""

from __future__ import annotations

import logging

from gateway.kafka.errors import ClusterUnavailable, KafkaGatewayError
from gateway.kafka.types import PartitionRef

log = logging.getLogger(__name__)


def committed_offsets(admin, group_ids: list[str]) -> dict[str, dict[PartitionRef, int]]:
    """Each group's committed offsets (a group that could not be asked, in the fallback, is left out)."""
    if not group_ids:
        return {}
    try:
        return admin.group_offsets_batched(group_ids)
    except ClusterUnavailable:
        raise
    except KafkaGatewayError as exc:
        # A warning: group by group is many times slower, and a big cluster's sweep may then run out of time.
        log.warning("Batched OffsetFetch of %d groups on %s failed (%s); asking group by group", len(group_ids),
                    admin.cluster, exc.message)
        return admin.group_offsets(group_ids, skip_failed=True)
