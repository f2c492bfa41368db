"""The stale-while-revalidate topic table: pure timing logic, and the real thing on the broker."""

import threading
import time

import pytest

from console.kafka.errors import ClusterUnavailable
from topics import table
from topics.selectors import topic_table, topic_table_invalidate


@pytest.fixture(autouse=True)
def _clean():
    for name in ("fake", "local"):
        table.invalidate(name)
    yield
    for name in ("fake", "local"):
        table.wait_for_refresh(name)
        table.invalidate(name)


class Builder:
    def __init__(self):
        self.builds = 0
        self.fail = False
        self.release = threading.Event()
        self.release.set()

    def __call__(self, admin):
        self.release.wait(5)
        if self.fail:
            raise ClusterUnavailable("down")
        self.builds += 1
        return table.Snapshot(rows=[self.builds], taken_at=time.time(), complete=True)


def test_first_request_builds_and_fresh_snapshots_are_reused(settings):
    settings.TOPIC_LIST_CACHE_S = 60
    build = Builder()

    assert table.snapshot("fake", lambda: None, build).rows == [1]
    assert table.snapshot("fake", lambda: None, build).rows == [1]
    assert build.builds == 1


def test_stale_snapshot_is_served_at_once_while_one_refresh_runs(settings):
    settings.TOPIC_LIST_CACHE_S = 0
    build = Builder()
    table.snapshot("fake", lambda: None, build)
    build.release.clear()  # the background rebuild blocks until released

    started = time.monotonic()
    served = [table.snapshot("fake", lambda: None, build).rows for _ in range(3)]

    assert time.monotonic() - started < 0.5 and served == [[1], [1], [1]]
    build.release.set()
    table.wait_for_refresh("fake")
    assert build.builds == 2  # three stale requests, one rebuild
    assert table.snapshot("fake", lambda: None, build).rows == [2]


def test_failed_refresh_keeps_serving_the_last_snapshot(settings):
    settings.TOPIC_LIST_CACHE_S = 0
    build = Builder()
    table.snapshot("fake", lambda: None, build)
    build.fail = True

    table.snapshot("fake", lambda: None, build)
    table.wait_for_refresh("fake")

    assert table.snapshot("fake", lambda: None, build).rows == [1]


@pytest.mark.kafka
@pytest.mark.django_db
def test_new_topics_appear_after_the_background_refresh(settings, local_cluster, topic_factory):
    settings.TOPIC_LIST_CACHE_S = 60
    before = {r.name for r in topic_table("local")}
    created = topic_factory("table")

    assert created not in {r.name for r in topic_table("local")}  # fresh snapshot reused
    settings.TOPIC_LIST_CACHE_S = 0
    assert created not in {r.name for r in topic_table("local")}  # stale one served, refresh started
    table.wait_for_refresh("local")
    assert created in {r.name for r in topic_table("local")}
    assert before < {r.name for r in topic_table("local")}


@pytest.mark.kafka
@pytest.mark.django_db
def test_changes_through_the_console_show_at_once(settings, local_cluster, topic_factory):
    settings.TOPIC_LIST_CACHE_S = 60
    topic_table("local")
    created = topic_factory("table-inv")

    topic_table_invalidate("local")  # what every topic service does after a change

    assert created in {r.name for r in topic_table("local")}


def test_changed_cluster_settings_rebuild_at_once_instead_of_serving_the_old_clusters_topics(settings):
    builds = []

    def build(admin):
        builds.append(admin)
        return table.Snapshot(rows=[admin], taken_at=time.time(), complete=True)

    table.invalidate("moved")
    assert table.snapshot("moved", lambda: "old-brokers", build, version="a").rows == ["old-brokers"]
    assert table.snapshot("moved", lambda: "new-brokers", build, version="a").rows == ["old-brokers"]
    assert table.snapshot("moved", lambda: "new-brokers", build, version="b").rows == ["new-brokers"]
    assert builds == ["old-brokers", "new-brokers"]
