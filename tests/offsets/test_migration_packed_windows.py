"""Migration 0008: status windows stored as JSON before the upgrade are carried over into the packed form, point
for point, so no group goes back to "collecting samples"."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from offsets.lag.window import LagWindow

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("offsets", "0007_lag_sweep_skipped")
AFTER = ("offsets", "0008_packed_lag_windows")


def test_json_windows_become_the_same_packed_windows():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    old = executor.loader.project_state([BEFORE]).apps.get_model("offsets", "GroupLagStatus")
    window = {"times": [100.0, 130.0, 160.0],
              "partitions": {"orders-0": [[1, 5], [2, 6, 6], [3, 9, None]], "a.b-12": [None, [0, 4, 4]]}}
    old.objects.create(cluster="c", group="g/ #%\"<b>", status="OK", reason="r", window=window, totals=[4, 4, 6])
    old.objects.create(cluster="c", group="empty", window={})
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([AFTER])
    new = executor.loader.project_state([AFTER]).apps.get_model("offsets", "GroupLagStatus")
    packed = {row.group: LagWindow.from_bytes(row.window) for row in new.objects.filter(cluster="c")}
    assert packed["g/ #%\"<b>"].as_dict() == {
        "times": [100.0, 130.0, 160.0],
        "partitions": {"orders-0": [[1, 5], [2, 6, 6], [3, 9]], "a.b-12": [None, None, [0, 4, 4]]}}
    assert packed["empty"] == LagWindow()
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
