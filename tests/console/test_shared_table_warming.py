"""A process decodes a new snapshot of a table it reads in a thread of its own, so the page that first meets the new
snapshot does not wait for the decoding; a table it stopped reading is let go. Against the session's real Redis."""

from __future__ import annotations

import time
import uuid

import pytest
import redis

from console import shared_table_stores
from console.shared_table import SharedTable, Snapshot
from console.shared_table_stores import RedisStore

TABLE = SharedTable("test-warming", format=1, row_out=list, row_in=tuple, key=lambda row: row[0],
                    interval_setting="TOPIC_SNAPSHOT_INTERVAL_S", lock_setting="TOPIC_SNAPSHOT_LOCK_S")


def _wait_for(check, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the warmer did not act in time"
        time.sleep(0.05)


@pytest.fixture
def counted_store(redis_node, monkeypatch):
    """A fresh store of the test table whose decodings are counted, and the warmer's pace made quick."""
    monkeypatch.setattr(shared_table_stores, "WARM_INTERVAL_S", 0.1)
    decodings: list[int] = []
    decode = TABLE.decode

    def counting(blob):
        decodings.append(1)
        return decode(blob)

    monkeypatch.setattr(TABLE, "decode", counting)
    return RedisStore(TABLE, redis.Redis.from_url(redis_node.url)), decodings


def test_a_new_snapshot_is_decoded_before_a_page_asks_for_it(counted_store):
    store, decodings = counted_store
    cluster = f"warm-{uuid.uuid4().hex[:8]}"
    writer = RedisStore(TABLE, store.client)  # another process's store: the one that rebuilt the table
    writer.write(cluster, "v1", Snapshot(rows=[("a", 1)], taken_at=time.time(), complete=True))
    assert store.read(cluster)[1].rows == [("a", 1)] and len(decodings) == 1

    writer.write(cluster, "v1", Snapshot(rows=[("a", 1), ("b", 2)], taken_at=time.time() + 1, complete=True))
    _wait_for(lambda: len(decodings) == 2)
    assert store.read(cluster)[1].rows == [("a", 1), ("b", 2)]
    assert len(decodings) == 2  # the read found it decoded


def test_a_table_no_longer_read_is_let_go(counted_store, monkeypatch):
    store, decodings = counted_store
    cluster = f"warm-{uuid.uuid4().hex[:8]}"
    RedisStore(TABLE, store.client).write(cluster, "v1", Snapshot(rows=[("a", 1)], taken_at=time.time(),
                                                                   complete=True))
    store.read(cluster)
    monkeypatch.setattr(shared_table_stores, "WARM_KEEP_S", 0.2)
    _wait_for(lambda: cluster not in store._decoded)
    assert store.read(cluster)[1].rows == [("a", 1)] and len(decodings) == 2  # read, and so decoded, afresh
