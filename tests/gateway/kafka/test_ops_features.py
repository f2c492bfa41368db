"""DescribeFeatures' answer as plain data (its fields as Jackson writes FeatureMetadata) into finalized levels; the
real call is checked against Kafka's FeatureCommand in tests/access/test_acl_ranges_real.py."""

from __future__ import annotations

from gateway.kafka.java.ops_features import finalized_from_plain


def test_finalized_levels_are_read_and_supported_ranges_ignored():
    plain = {"finalizedFeatures": {"metadata.version": {"minVersionLevel": 30, "maxVersionLevel": 30},
                                   "group.version": {"minVersionLevel": 1, "maxVersionLevel": 1}},
             "finalizedFeaturesEpoch": 12,
             "supportedFeatures": {"kraft.version": {"minVersion": 0, "maxVersion": 1}}}
    features = finalized_from_plain(plain)
    assert features.levels == {"group.version": 1, "metadata.version": 30}
    assert features.level("metadata.version") == 30 and features.level("kraft.version") is None


def test_a_cluster_reporting_nothing_finalized_has_no_levels():
    assert finalized_from_plain({"finalizedFeatures": None}).levels == {}
