"""The shared topic table: its encoding, changes laid over it and windows (pure), then the real thing: Redis, a
Celery worker, pages that never ask Kafka for every partition, and Redis down."""

import threading
import time
import uuid

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from django.utils.html import escape

from gateway.kafka.types import PartitionRef
from topics import disk, log_starts, table
from topics.selectors import leader_windows, topic_snapshot_refresh, topic_table
from topics.table import LocalStore, Snapshot, TopicRow
from topics.views import MSG_TABLE_BUILDING, MSG_TABLE_NOT_SHARED
from tests.fixtures.clusters import forget_shared_table


def row(name: str, partitions: int = 4, messages: int | None = 10) -> TopicRow:
    return TopicRow(name=name, partitions=partitions, replication_factor=1, under_replicated=0, offline=0,
                    messages=messages, internal=name.startswith("__"))


def test_ten_thousand_topics_of_four_partitions_fit_in_a_small_blob_and_come_back_equal():
    rows = [row(f"orders.events-{i:05d}", messages=i * 1000) for i in range(10_000)]
    snapshot = Snapshot(rows=rows, taken_at=1_700_000_000.5, complete=True)

    blob = table.encode(snapshot, "v1")

    assert len(blob) < 300_000
    version, back = table.decode(blob)
    assert version == "v1" and back.rows == rows and back.taken_at == snapshot.taken_at and back.complete


def test_console_changes_lay_over_the_snapshot_until_a_later_one_holds_them():
    snapshot = Snapshot(rows=[row("a"), row("b"), row("c")], taken_at=1000.0, complete=True)
    changes = {"b": (1001.0, None), "d": (1001.0, row("d", messages=None)), "a": (900.0, None)}

    seen = table.with_changes(snapshot, changes)

    assert [r.name for r in seen.rows] == ["a", "c", "d"]  # a's deletion is older than the snapshot
    assert not seen.complete
    assert table.with_changes(Snapshot(snapshot.rows, 2000.0, True), changes).rows == snapshot.rows


def test_offsets_are_asked_in_windows_bounded_per_leader():
    partitions = [(PartitionRef(f"t{i}", p), (i + p) % 3) for i in range(50) for p in range(4)]
    partitions += [(PartitionRef("offline", 0), None)]

    windows = leader_windows(partitions, 20)

    leaders = dict(partitions)
    for window in windows:
        per_leader = [sum(1 for ref in window if leaders[ref] == leader) for leader in range(3)]
        assert max(per_leader) <= 20
    asked = [ref for window in windows for ref in window]
    assert sorted(asked) == sorted(ref for ref, leader in partitions if leader is not None)


def test_one_rebuild_at_a_time_per_cluster(settings):
    from devstack.kafka import free_port

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens: this process's own store
    table.forget_redis_state()
    started, release, results = threading.Event(), threading.Event(), []

    def build():
        started.set()
        release.wait(5)
        return Snapshot(rows=[row("a")], taken_at=time.time(), complete=True)

    first = threading.Thread(target=lambda: results.append(table.refresh("one-at-a-time", "v", build)))
    first.start()
    assert started.wait(5)
    assert table.refresh("one-at-a-time", "v", build) is None  # the second caller does not build again
    release.set()
    first.join(5)
    try:
        found = table.read("one-at-a-time", "v")
        assert results[0] is not None and found.rows == [row("a")] and not found.shared
        assert table.read("one-at-a-time", "other settings") is None
    finally:
        table.invalidate("one-at-a-time")
        table.forget_redis_state()


# --- against the real broker -----------------------------------------------------------------------------------

@pytest.fixture
def fresh_table():
    """Neither shared table of the cluster is known, and no rebuild this process started (a page of the test before
    starts one of each in the background) still holds its lock."""
    for shared in (table.TABLE, disk.TABLE):
        forget_shared_table(shared)
    disk.forget("local")
    log_starts.forget("local")
    yield
    for shared in (table.TABLE, disk.TABLE):
        forget_shared_table(shared)
    disk.forget("local")
    log_starts.forget("local")


def _create(admin: AdminClient, name: str, partitions: int = 2) -> None:
    for future in admin.create_topics([NewTopic(name, partitions, 1)], operation_timeout=10).values():
        future.result(timeout=15)


def _delete(admin: AdminClient, name: str) -> None:
    for future in admin.delete_topics([name], operation_timeout=10).values():
        future.result(timeout=15)


@pytest.fixture
def kafka_calls(monkeypatch):
    """Every list_topics, topic_ids, list_offsets_many, list_offsets_of and describe_log_dirs made in this process,
    through the real gateway methods."""
    from gateway.kafka.admin import KafkaAdmin
    from gateway.kafka.isolated import IsolatedKafkaAdmin

    calls = []
    for cls in (KafkaAdmin, IsolatedKafkaAdmin):
        for name in ("list_topics", "topic_ids", "list_offsets_many", "list_offsets_of", "describe_log_dirs"):
            def spy(self, *args, _real=getattr(cls, name), _name=name, **kwargs):
                calls.append((_name, args))
                return _real(self, *args, **kwargs)

            monkeypatch.setattr(cls, name, spy)
    return calls


def _listed(body: str, name: str) -> bool:
    return f'/topics/{name}/"' in body


def _names(client, query: str, **params) -> tuple[int, str]:
    response = client.get("/clusters/local/topics/", {"q": query, **params})
    return response.status_code, response.content.decode()


@pytest.mark.kafka
@pytest.mark.django_db
def test_the_table_survives_topics_deleted_and_created_behind_the_consoles_back(
        redis_node, local_cluster, fresh_table, outsider, client_for, viewer):
    prefix = f"behind-{uuid.uuid4().hex[:6]}"
    kept, doomed, late = f"{prefix}-kept", f"{prefix}-doomed", f"{prefix}-late"
    _create(outsider, kept)
    _create(outsider, doomed)
    assert topic_snapshot_refresh("local") is not None
    client = client_for(viewer)

    _delete(outsider, doomed)
    _create(outsider, late)
    for sort in ("name", "messages", "partitions", "size"):
        status, body = _names(client, prefix, sort=sort)
        assert status == 200 and _listed(body, kept) and not _listed(body, doomed)  # its configs are gone: left off the page

    assert topic_snapshot_refresh("local") is not None  # what beat does next
    status, body = _names(client, prefix)
    assert status == 200 and _listed(body, kept) and _listed(body, late) and not _listed(body, doomed)


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_celery_worker_builds_the_table_this_process_reads(
        redis_node, celery_worker_process, local_cluster, fresh_table, outsider, kafka_calls, client_for, viewer):
    from topics.tasks import refresh_topic_snapshot

    name = f"shared-{uuid.uuid4().hex[:6]}"
    _create(outsider, name)

    done = refresh_topic_snapshot.delay("local").get(timeout=90)

    assert done["topics"] > 0
    table.forget_redis_state()  # nothing decoded here before: whatever this process shows comes from Redis
    status, body = _names(client_for(viewer), name)
    assert status == 200 and _listed(body, name)
    assert done["sizes"] == "read"
    assert disk.disk_usage("local").by_topic[name] == 0  # sizes too: no process asks every broker for its own
    assert kafka_calls == []  # built in the worker, not here
    assert table.read("local", _version()).taken_at == done["taken_at"]


def _version() -> str:
    from console.clusters.selectors import cluster_admin
    from topics.listing import _version as version_of

    return version_of(cluster_admin("local"))


@pytest.mark.kafka
@pytest.mark.django_db
def test_the_page_says_it_is_being_built_then_shows_how_old_the_table_is(
        redis_node, local_cluster, fresh_table, client_for, viewer):
    client = client_for(viewer)

    response = client.get("/clusters/local/topics/")

    assert response.status_code == 200
    assert MSG_TABLE_BUILDING.format(cluster="local") in response.content.decode()
    table.wait_for_refresh("local")  # the rebuild the page started, in a thread of this process
    body = client.get("/clusters/local/topics/", headers={"HX-Request": "true"}).content.decode()
    assert "Counts as of " in body and " s ago." in body and escape(MSG_TABLE_NOT_SHARED) not in body


@pytest.mark.kafka
@pytest.mark.django_db
def test_no_page_asks_kafka_for_every_partition_and_console_changes_show_at_once(
        redis_node, local_cluster, fresh_table, kafka_calls, client_for, admin):
    from console.audit.actor import Actor
    from topics.services import topic_create, topic_delete

    topic_snapshot_refresh("local")  # what beat keeps there: both shared tables
    disk.disk_usage_refresh("local")
    kafka_calls.clear()
    client = client_for(admin)
    for params in ({}, {"q": "e"}, {"sort": "messages", "desc": "1"}, {"page": "2"}, {"q": "^_", "regex": "1"}):
        assert client.get("/clusters/local/topics/", params).status_code == 200
    assert kafka_calls == []

    name = f"made-here-{uuid.uuid4().hex[:6]}"
    topic_create(actor=Actor.system(), cluster="local", name=name, partitions=3, replication_factor=1, configs={})
    status, body = _names(client, name)
    assert status == 200 and _listed(body, name) and "<td>3</td>" in body
    # Only the new topic's own partitions were asked for.
    assert all(ref.topic == name for call, args in kafka_calls if call == "list_offsets_many" for ref in args[0])
    assert not any(call == "list_topics" for call, _ in kafka_calls)

    topic_delete(actor=Actor.system(), cluster="local", topic=name, confirm=name)
    status, body = _names(client, name)
    assert status == 200 and not _listed(body, name)


@pytest.mark.kafka
@pytest.mark.django_db
def test_without_redis_each_process_builds_its_own_table_in_the_background(
        local_cluster, fresh_table, settings, client_for, viewer, topic_factory):
    from devstack.kafka import free_port

    settings.REDIS_URL = f"redis://:nobody@127.0.0.1:{free_port()}/0"  # nothing listens there
    table.forget_redis_state()
    name = topic_factory("no-redis")
    client = client_for(viewer)

    first = client.get("/clusters/local/topics/", {"q": name})
    assert first.status_code == 200 and MSG_TABLE_BUILDING.format(cluster="local") in first.content.decode()
    table.wait_for_refresh("local")
    status, body = _names(client, name)
    assert status == 200 and _listed(body, name) and escape(MSG_TABLE_NOT_SHARED) in body
    assert name in {r.name for r in topic_table("local")}


@pytest.mark.kafka
@pytest.mark.django_db
def test_beat_rebuilds_a_table_only_once_it_is_due(local_cluster, fresh_table, outsider, settings):
    from topics.tasks import refresh_topic_snapshot

    _create(outsider, f"due-{uuid.uuid4().hex[:6]}")
    first = refresh_topic_snapshot("local")
    assert first["topics"] > 0 and first["sizes"] == "read"
    again = refresh_topic_snapshot("local")  # right after: neither table is due
    assert again == {"cluster": "local", "skipped": "not due, or another process is rebuilding it",
                     "sizes": "not due"}
    # A build that took longer than the interval allows (its share of the time) puts the next one further off.
    settings.TOPIC_SNAPSHOT_INTERVAL_S = 0.0
    built = table.read("local", _version())
    assert table.TABLE.due_after(built) == built.build_s / settings.SNAPSHOT_REBUILD_SHARE > 0
    settings.SNAPSHOT_REBUILD_SHARE = 1e9
    settings.DISK_SNAPSHOT_INTERVAL_S = 0.0
    later = refresh_topic_snapshot("local")
    assert later["taken_at"] > first["taken_at"] and later["sizes"] == "read"


# --- log starts remembered between rebuilds (topics/log_starts.py) ------------------------------------------------

def _produce(bootstrap: str, name: str, count: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        producer.produce(name, value=b"%d" % i, partition=0)
    assert producer.flush(15) == 0


def _cut(admin: AdminClient, name: str, before: int) -> None:
    from confluent_kafka import TopicPartition

    for future in admin.delete_records([TopicPartition(name, 0, before)], operation_timeout=10).values():
        future.result(timeout=15)


def _starts_asked(calls) -> set[str]:
    return {ref.topic for call, args in calls if call == "list_offsets_of" for ref in args[0].get("earliest", [])}


def _messages(snapshot, name: str) -> int | None:
    return next(r.messages for r in snapshot.rows if r.name == name)


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_rebuild_asks_again_only_the_starts_that_may_have_moved_and_knows_a_topic_made_again_by_its_id(
        redis_node, local_cluster, kafka_node, fresh_table, outsider, kafka_calls, settings):
    from console.clusters.selectors import cluster_admin

    settings.TOPIC_SNAPSHOT_START_ROUNDS = 10**6  # no topic's turn comes: only the rules below ask starts again
    prefix = f"starts-{uuid.uuid4().hex[:6]}"
    kept, remade = f"{prefix}-kept", f"{prefix}-remade"
    for name in (kept, remade):
        _create(outsider, name, partitions=1)
        _produce(kafka_node.bootstrap, name, 10)
    _cut(outsider, kept, 4)
    _cut(outsider, remade, 8)
    admin = cluster_admin("local")
    ids = admin.topic_ids()
    assert ids[kept] == admin.describe_topics([kept])[kept].topic_id  # the Java listing parsed: the same ids

    first = topic_snapshot_refresh("local")
    assert _messages(first, kept) == 6 and _messages(first, remade) == 2
    _delete(outsider, remade)
    _create(outsider, remade, partitions=1)  # the same name, a new topic: its log starts at 0
    _produce(kafka_node.bootstrap, remade, 12)
    kafka_calls.clear()

    second = topic_snapshot_refresh("local")

    assert _messages(second, kept) == 6  # its remembered start (4) stands
    assert _messages(second, remade) == 12  # not 12 - 8: a new id, so its start was asked again
    asked = _starts_asked(kafka_calls)
    assert remade in asked and kept not in asked
    assert admin.topic_ids()[remade] != ids[remade]


@pytest.mark.kafka
@pytest.mark.django_db
def test_records_deleted_by_another_client_show_within_the_rounds_and_the_consoles_own_at_the_next_rebuild(
        redis_node, local_cluster, kafka_node, fresh_table, outsider, settings):
    from console.audit.actor import Actor
    from topics.services import topic_records_purge

    settings.TOPIC_SNAPSHOT_START_ROUNDS = 3
    prefix = f"moved-{uuid.uuid4().hex[:6]}"
    theirs, ours = f"{prefix}-theirs", f"{prefix}-ours"
    for name in (theirs, ours):
        _create(outsider, name, partitions=1)
        _produce(kafka_node.bootstrap, name, 10)
    assert _messages(topic_snapshot_refresh("local"), theirs) == 10

    _cut(outsider, theirs, 7)  # retention would move it the same way: no change the console could know of
    topic_records_purge(actor=Actor.system(), cluster="local", topic=ours, partitions=[0], before=5)
    next_one = topic_snapshot_refresh("local")
    assert _messages(next_one, ours) == 5  # the table's changes name it: its start was asked again
    counts = [_messages(next_one, theirs)] + [_messages(topic_snapshot_refresh("local"), theirs) for _ in range(2)]
    assert counts[-1] == 3  # its turn came within three rebuilds


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_topic_deleted_between_the_metadata_and_its_offsets_is_left_out_and_the_table_stays_complete(
        redis_node, local_cluster, fresh_table, outsider, monkeypatch):
    from gateway.kafka.admin import KafkaAdmin
    from gateway.kafka.isolated import IsolatedKafkaAdmin

    prefix = f"meanwhile-{uuid.uuid4().hex[:6]}"
    kept, doomed = f"{prefix}-kept", f"{prefix}-doomed"
    _create(outsider, kept)
    _create(outsider, doomed)
    for cls in (KafkaAdmin, IsolatedKafkaAdmin):
        def listed_then_deleted(self, *args, _real=cls.list_topics, **kwargs):
            found = _real(self, *args, **kwargs)
            if any(t.name == doomed for t in found):
                _delete(outsider, doomed)  # another client, right after the Metadata answer
            return found

        monkeypatch.setattr(cls, "list_topics", listed_then_deleted)

    built = topic_snapshot_refresh("local")

    names = {r.name for r in built.rows}
    assert kept in names and doomed not in names
    assert built.complete
