"""Topic size on disk (DescribeLogDirs through the Java client) on the real broker: per topic and partition, in
the topic list (sortable) and the topic page."""

from __future__ import annotations

import re

import pytest

from topics import disk
from topics.selectors import topic_snapshot_refresh

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def test_sizes_per_topic_and_partition_in_the_pages(client_for, viewer, topic_factory, produce, local_cluster):
    big, small = topic_factory("disk-big", partitions=2), topic_factory("disk-small", partitions=1)
    produce(big, [(i % 2, None, b"x" * 1000, None) for i in range(200)])
    produce(small, [(0, None, b"y", None)])
    disk.forget("local")
    topic_snapshot_refresh("local", wait_s=30)  # what beat does; pages only read the table
    usage = disk.disk_usage("local", wait=True)
    assert usage.by_topic[big] > 200_000 > usage.by_topic[small] > 0
    sizes = usage.partition_sizes(big)
    assert set(sizes) == {0, 1} and all(list(per_broker) == [1] and size > 100_000
                                        for per_broker in sizes.values() for size in per_broker.values())
    client = client_for(viewer)
    listing = client.get("/clusters/local/topics/", {"q": "disk-", "sort": "size", "desc": "1"}).content.decode()
    order = [name for name in re.findall(r'/topics/(disk-[a-z]+-[0-9a-f]+)/"', listing)]
    assert order.index(big) < order.index(small)
    assert f'title="{usage.by_topic[big]} bytes"' in listing
    page = client.get(f"/clusters/local/topics/{big}/", {"tab": "partitions"}).content.decode()
    assert f"broker 1: {sizes[0][1]} bytes" in page
