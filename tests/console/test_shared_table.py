"""console/shared_table.py: when a table is due for its background rebuild and what a snapshot carries through its
encoding (without Redis or Kafka), and which snapshot wins when Redis comes back (the session's Redis)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest

from console.shared_table import SharedTable, Snapshot, forget_redis_state
from console.shared_table_stores import forget_redis_clients, redis_failed

TABLE = SharedTable("test-cadence", format=1, row_out=list, row_in=tuple, key=lambda row: row[0],
                    interval_setting="TOPIC_SNAPSHOT_INTERVAL_S", lock_setting="TOPIC_SNAPSHOT_LOCK_S")


def snapshot(build_s: float, *, complete: bool = True, age_s: float = 0.0) -> Snapshot:
    return Snapshot(rows=[("a", 1)], taken_at=time.time() - age_s, complete=complete, build_s=build_s)


def test_a_table_that_builds_fast_is_rebuilt_every_interval(settings):
    settings.TOPIC_SNAPSHOT_INTERVAL_S, settings.SNAPSHOT_REBUILD_SHARE = 15.0, 0.1
    assert TABLE.due_after(snapshot(0.3)) == 15.0


def test_a_table_that_costs_seconds_is_rebuilt_within_its_share_of_the_time(settings):
    settings.TOPIC_SNAPSHOT_INTERVAL_S, settings.SNAPSHOT_REBUILD_SHARE = 15.0, 0.1
    assert TABLE.due_after(snapshot(4.0)) == 40.0
    # Pages start a rebuild of their own only when the background job has evidently missed its runs.
    assert TABLE.stale_after(snapshot(4.0)) == 120.0


def test_an_incomplete_table_is_tried_again_at_the_usual_pace(settings):
    settings.TOPIC_SNAPSHOT_INTERVAL_S, settings.SNAPSHOT_REBUILD_SHARE = 15.0, 0.1
    assert TABLE.due_after(snapshot(4.0, complete=False)) == 15.0


def test_the_build_time_survives_the_encoding():
    built = snapshot(2.5)
    _, decoded = TABLE.decode(TABLE.encode(built, "v1"))
    assert (decoded.build_s, decoded.rows, decoded.complete) == (2.5, [("a", 1)], True)


# --- against the session's Redis ---------------------------------------------------------------------------------

@pytest.fixture
def cluster(redis_node):
    """A cluster name of the test's own, with this process asking Redis afresh before and after it."""
    name = f"table-{uuid.uuid4().hex[:6]}"
    forget_redis_state()
    yield name
    TABLE.invalidate(name)
    forget_redis_state()


def _built(*names: str) -> Callable[[], Snapshot]:
    return lambda: Snapshot(rows=[(n, 1) for n in names], taken_at=time.time(), complete=True)


def test_a_snapshot_built_while_redis_was_away_is_not_replaced_by_the_older_shared_one(cluster):
    TABLE.refresh(cluster, "v", _built("a"))
    assert TABLE.read(cluster, "v").shared

    redis_failed(RuntimeError("a 2 s timeout under load"))  # the process reads and writes its own store now
    TABLE.refresh(cluster, "v", _built("a", "b"))
    own = TABLE.read(cluster, "v")
    assert own.rows == [("a", 1), ("b", 1)] and not own.shared

    forget_redis_clients()  # Redis is asked again: the newer snapshot goes there instead of being shadowed
    back = TABLE.read(cluster, "v")
    assert back.rows == [("a", 1), ("b", 1)] and back.shared and back.taken_at == own.taken_at
    assert TABLE._local.stamp(cluster) is None

    # A rebuild stored by another process after this one's own wins, and this one's is dropped.
    redis_failed(RuntimeError("away again"))
    TABLE.refresh(cluster, "v", _built("old"))
    forget_redis_clients()
    TABLE._redis_store().write(cluster, "v", _built("newest")())
    assert TABLE.read(cluster, "v").rows == [("newest", 1)]
    assert TABLE._local.stamp(cluster) is None


def test_a_process_that_loses_redis_serves_the_shared_snapshot_it_last_read(cluster):
    TABLE.refresh(cluster, "v", _built("a", "b"))
    assert TABLE.read(cluster, "v").shared

    redis_failed(RuntimeError("a 2 s timeout under load"))
    kept = TABLE.read(cluster, "v")
    assert kept.rows == [("a", 1), ("b", 1)] and not kept.shared  # not "being built"
    assert TABLE.read(cluster, "other settings") is None

    forget_redis_clients()
    TABLE._redis_store().write(cluster, "v", _built("a", "b", "c")())
    back = TABLE.read(cluster, "v")
    assert back.rows == [("a", 1), ("b", 1), ("c", 1)] and back.shared
    assert TABLE._local.stamp(cluster) is None  # the kept copy went once Redis answered


def test_a_process_that_never_read_the_table_has_nothing_to_serve_without_redis(cluster):
    redis_failed(RuntimeError("down"))
    assert TABLE.read(cluster, "v") is None


def test_a_rebuild_that_began_before_the_stored_snapshot_does_not_replace_it(cluster):
    TABLE.refresh(cluster, "v", _built("with-the-new-topic"))
    began_earlier = lambda: Snapshot(rows=[("without-it", 1)], taken_at=time.time() - 200, complete=True)
    TABLE.refresh(cluster, "v", began_earlier)  # its lock had expired; it finishes last
    assert TABLE.read(cluster, "v").rows == [("with-the-new-topic", 1)]

    redis_failed(RuntimeError("away"))  # the same holds for this process's own store
    TABLE.refresh(cluster, "v", _built("own-newer"))
    TABLE.refresh(cluster, "v", began_earlier)
    assert TABLE.read(cluster, "v").rows == [("own-newer", 1)]
