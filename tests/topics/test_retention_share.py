"""The partitions tab's share of retention.bytes (topics/retention_share.py), from what the sampler stored: pure."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from brokers.selectors import RetentionShares
from gateway.kafka.broker_mbeans import RETENTION_SHARE, reading_from_attributes
from topics.retention_share import retention_cells

PARTITIONS = [SimpleNamespace(partition=0, replicas=(1, 2)), SimpleNamespace(partition=1, replicas=(2, 3)),
              SimpleNamespace(partition=2, replicas=(3,))]


def test_each_partition_shows_its_fullest_replica_and_zero_is_what_the_broker_says():
    shares = RetentionShares(by_partition={0: {1: 91, 2: 88}}, answering=frozenset({1, 2}),
                             read_at=datetime(2026, 11, 29, 10, 0, tzinfo=UTC))
    cells = retention_cells(PARTITIONS, "1073741824", shares)
    assert (cells[0].text, cells[0].percent, cells[0].near) == ("91 %", 91, True)
    assert cells[0].detail.startswith("broker 1: 91 %; broker 2: 88 %") and "10:00:00 UTC" in cells[0].detail
    assert (cells[1].text, cells[1].near) == ("0 %", False)  # broker 2 answered and listed nothing: below 1 %
    assert (cells[2].text, cells[2].percent) == ("?", None)  # broker 3 gave no figures


def test_no_limit_and_no_jmx_say_so():
    assert {c.text for c in retention_cells(PARTITIONS, "-1", None).values()} == {"no limit"}
    assert {c.text for c in retention_cells(PARTITIONS, "1000", None).values()} == {"–"}
    assert "JMX" in retention_cells(PARTITIONS, "1000", None)[0].detail


def test_a_reading_keeps_the_gauges_by_topic_and_partition():
    found = {f"{RETENTION_SHARE},topic=orders-eu,partition=3": {"Value": 97},
             f"{RETENTION_SHARE},topic=orders-eu,partition=10": {"Value": 100},
             "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions": {"Value": 0}}
    reading = reading_from_attributes(1, "h:1", 0.0, 0.1, found)
    assert reading.retention_shares == {"orders-eu": {3: 97, 10: 100}}
    assert reading.attributes[f"{RETENTION_SHARE},topic=orders-eu,partition=3:Value"] == 97
