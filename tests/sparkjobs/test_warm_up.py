"""The resident driver's warm-up (sparkjobs/jobs/driver.py), which production drivers run in the background as they
start and the tests' drivers skip (each would take both cores for a while): its Spark work runs here, in the
session's SparkSession, so a change that breaks it fails here instead of leaving a traceback in a driver's log and
every first replay slow. (A module of its own, after the others: the session's SparkSession is warm by then.)"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark]


def test_the_warm_up_runs_a_replays_write_paths_and_leaves_nothing(spark_session, monkeypatch):
    from sparkjobs.runner import DRIVER_APP

    monkeypatch.syspath_prepend(str(DRIVER_APP.parent))  # as spark-submit ships them: siblings, no package
    try:
        import driver

        driver.warm_up(spark_session, count=10_000)  # the same paths; fewer rows than a JIT needs to compile
    finally:  # the siblings' top-level names go again (Spark's own modules stay: they are shared)
        for name, module in list(sys.modules.items()):
            if Path(getattr(module, "__file__", None) or "/").parent == DRIVER_APP.parent:
                del sys.modules[name]
    assert list(Path(spark_session.conf.get("spark.local.dir", "/tmp")).glob(f"warm-up-{os.getpid()}")) == []
