"""console/shared_table.py without Redis or Kafka: when a table is due for its background rebuild, and what a
snapshot carries through its encoding."""

from __future__ import annotations

import time

from console.shared_table import SharedTable, Snapshot

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
