"""Pure: DescribeLogDirs' replicas become one shared row per topic, and back to the page's figures."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gateway.kafka.types import PartitionRef, ReplicaSize
from console.shared_table import Snapshot
from topics.disk import TABLE, DiskUsage, topic_rows

replicas = st.lists(st.builds(
    lambda topic, partition, broker, size, future: ReplicaSize(PartitionRef(topic, partition), broker, "/d", size,
                                                               0, future),
    st.text(min_size=1, max_size=20), st.integers(0, 50), st.integers(0, 5), st.integers(0, 2**53), st.booleans()),
    max_size=60)


@given(replicas)
def test_per_topic_rows_keep_every_replica_but_the_moving_copies(found):
    usage = DiskUsage.of(topic_rows(found), taken_at=1.0)
    settled = [r for r in found if not r.future]
    for topic in {r.ref.topic for r in settled}:
        mine = [r for r in settled if r.ref.topic == topic]
        assert usage.by_topic[topic] == sum(r.size for r in mine)
        expected: dict[int, dict[int, int]] = {}
        for r in mine:
            expected.setdefault(r.ref.partition, {})[r.broker] = r.size
        assert usage.partition_sizes(topic) == expected
    assert set(usage.by_topic) == {r.ref.topic for r in settled}


@given(replicas)
def test_rows_survive_the_shared_encoding(found):
    rows = topic_rows(found)
    version, snapshot = TABLE.decode(TABLE.encode(Snapshot(rows=rows, taken_at=2.0, complete=True), "v"))
    assert version == "v" and snapshot.rows == rows
