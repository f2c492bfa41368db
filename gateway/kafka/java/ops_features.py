"""The cluster's finalized feature levels (DescribeFeatures, KIP-584) through Kafka's Java Admin client: librdkafka
has no such call."""

from __future__ import annotations

from gateway.kafka.java import bridge
from gateway.kafka.types import FinalizedFeatures


def finalized_from_plain(found: dict) -> FinalizedFeatures:
    """Pure: FeatureMetadata as Jackson writes its fields. A feature finalized at level 0 is off; Kafka still
    reports some that way (group.version before a cluster turns it on)."""
    ranges = found.get("finalizedFeatures") or {}
    return FinalizedFeatures(levels={name: int(r["maxVersionLevel"]) for name, r in sorted(ranges.items())})


class FeatureOps(bridge.JavaCalls):
    def finalized_features(self) -> FinalizedFeatures:
        """Every finalized feature's level, metadata.version's among them (one DescribeFeatures request)."""
        found = self._java(lambda admin, jvm: admin.describeFeatures().featureMetadata())
        return finalized_from_plain(bridge.as_plain(found))
