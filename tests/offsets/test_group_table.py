"""The shared groups list: its encoding, filters and the console's changes laid over it (pure), then the real
thing: groups created and deleted behind the console's back, the console's own delete, pages that ask Kafka about
their own groups only, and Redis down."""

import uuid

import pytest
from confluent_kafka.admin import AdminClient
from django.urls import reverse
from django.utils.html import escape
from hypothesis import given, settings as hypothesis_settings, strategies as st

from console import shared_table
from console.shared_table import Snapshot
from offsets import group_table
from offsets.group_table import GroupEntry, filter_entries
from offsets.lag.status import SEVERITY
from offsets.selectors import group_snapshot_refresh
from offsets.views import MSG_GROUPS_BUILDING, MSG_GROUPS_NOT_SHARED
from tests.fixtures.clusters import forget_shared_table

TABLE = group_table.TABLE
ids = st.text(min_size=1, max_size=40)
entry = st.builds(GroupEntry, ids, st.sampled_from(["classic", "consumer", "share", "streams", "unknown"]),
                  st.sampled_from(["Stable", "Empty", "Dead", "Unknown"]), st.sampled_from(["", "classic", "share"]),
                  st.sampled_from(["", "OK", "WARN", "ERR", "STOP"]), st.none() | st.integers(0, 2**62))


@given(st.lists(entry, max_size=30), st.text(max_size=80))
@hypothesis_settings(max_examples=200, deadline=None)
def test_any_group_ids_come_back_equal_from_the_stored_snapshot_and_changes(rows, note):
    snapshot = Snapshot(rows=rows, taken_at=1_700_000_000.25, complete=not note, note=note)

    version, back = TABLE.decode(TABLE.encode(snapshot, "v1"))

    assert version == "v1" and back.rows == rows and back.note == note and back.complete == snapshot.complete
    for row in rows:
        assert TABLE.change_in(TABLE.change_out(5.0, row)) == (5.0, row)


def test_fifty_thousand_groups_fit_in_a_small_blob():
    rows = [GroupEntry(f"orders-service.consumer-{i:05d}", "consumer", "Stable", "consumer", "OK", i % 1000)
            for i in range(50_000)]

    blob = TABLE.encode(Snapshot(rows=rows, taken_at=1.0, complete=True), "v")

    assert len(blob) < 1_000_000
    assert TABLE.decode(blob)[1].rows == rows


def test_the_consoles_own_deletes_and_creations_lay_over_the_snapshot_until_a_later_one():
    rows = [GroupEntry(g, "classic", "Empty", "classic") for g in ("a", "b", "c")]
    snapshot = Snapshot(rows=rows, taken_at=1000.0, complete=True)
    made = GroupEntry("new", "classic", "Empty", "classic")
    changes = {"b": (1001.0, None), "new": (1001.0, made), "a": (900.0, None)}

    seen = TABLE.with_changes(snapshot, changes)

    assert [r.group_id for r in seen.rows] == ["a", "c", "new"]  # a's deletion is older than the snapshot
    assert TABLE.with_changes(Snapshot(rows, 2000.0, True), changes).rows == rows


def test_filters_and_orders_on_the_snapshot():
    rows = [GroupEntry("pay-a", "consumer", "Stable", "consumer", "OK", 5),
            GroupEntry("pay-b", "classic", "Empty", "classic", "ERR", 1),
            GroupEntry("Pay-c", "share", "Stable", "share", "", None),
            GroupEntry("other", "classic", "Empty", "", "WARN", 50),
            GroupEntry("pay-d", "classic", "Empty", "classic", "STOP", 9)]

    def names(**kwargs):
        return [r.group_id for r in filter_entries(rows, **kwargs)]

    assert names(query="PAY") == ["pay-a", "pay-b", "Pay-c", "pay-d"]
    assert names(group_type="classic") == ["pay-b", "other", "pay-d"]  # "other": its protocol, unlisted by Java
    assert names(state="Empty", lag_status="STOP") == ["pay-d"]
    assert names(sort="lag") == ["other", "pay-d", "pay-a", "pay-b", "Pay-c"]
    assert names(query="pay", sort="status") == ["pay-b", "pay-d", "pay-a", "Pay-c"]


@given(st.lists(st.tuples(st.sampled_from(["", "OK", "WARN", "ERR", "STOP", "BLOCKED"]),
                          st.one_of(st.none(), st.integers(0, 5))), max_size=60))
def test_worst_status_first_then_most_lag_keeps_the_id_order_among_equals(statuses):
    rows = [GroupEntry(f"g{i:03d}", "consumer", "Stable", "consumer", status, lag)
            for i, (status, lag) in enumerate(statuses)]

    ordered = filter_entries(rows, sort="status")

    assert ordered == sorted(rows, key=lambda r: (-SEVERITY.get(r.status, 0), -(r.lag or 0), r.group_id))


# --- against the real broker -----------------------------------------------------------------------------------

@pytest.fixture
def fresh_groups_table():
    forget_shared_table(TABLE)
    yield
    forget_shared_table(TABLE)


def _delete_outside(admin: AdminClient, group: str) -> None:
    for future in admin.delete_consumer_groups([group], request_timeout=15).values():
        future.result(timeout=20)


@pytest.fixture
def group_calls(monkeypatch):
    """Every group call made in this process through the real gateway methods: (name, group ids or None)."""
    from gateway.kafka.admin import KafkaAdmin
    from gateway.kafka.isolated import IsolatedKafkaAdmin

    calls = []
    names = ("list_groups", "list_groups_of_every_type", "describe_groups", "group_offsets", "group_offsets_batched",
             "describe_share_groups", "share_group_offsets", "describe_streams_groups", "streams_group_offsets")
    for cls in (KafkaAdmin, IsolatedKafkaAdmin):
        for name in names:
            def spy(self, *args, _real=getattr(cls, name), _name=name, **kwargs):
                calls.append((_name, list(args[0]) if args else None))
                return _real(self, *args, **kwargs)

            monkeypatch.setattr(cls, name, spy)
    return calls


def _page(client, query: str, **params) -> tuple[int, str]:
    response = client.get("/clusters/local/groups/", {"q": query, **params})
    return response.status_code, response.content.decode()


def _listed(body: str, group: str) -> bool:
    return f'<tr data-group="{escape(group)}">' in body


@pytest.mark.kafka
@pytest.mark.django_db
def test_groups_made_and_deleted_behind_the_consoles_back_follow_the_next_snapshot(
        redis_node, local_cluster, fresh_groups_table, topic_factory, commit, outsider, client_for, viewer):
    topic = topic_factory("behind-groups")
    prefix = f"behind-{uuid.uuid4().hex[:6]}"
    kept, doomed, late = f"{prefix}-kept", f"{prefix}-doomed", f"{prefix}-late"
    commit(kept, {(topic, 0): 1})
    commit(doomed, {(topic, 0): 1})
    assert group_snapshot_refresh("local", wait_s=30) is not None
    client = client_for(viewer)

    _delete_outside(outsider, doomed)
    commit(late, {(topic, 0): 1})
    for params in ({}, {"sort": "lag"}, {"sort": "status"}, {"state": "Empty"}):
        status, body = _page(client, prefix, **params)
        # The snapshot still lists the deleted group; the page asks Kafka about its rows and leaves it off.
        assert status == 200 and _listed(body, kept) and not _listed(body, doomed) and not _listed(body, late)

    assert group_snapshot_refresh("local", wait_s=30) is not None  # what the sweep's task or beat does next
    status, body = _page(client, prefix)
    assert status == 200 and _listed(body, kept) and _listed(body, late) and not _listed(body, doomed)
    assert "2 groups" in body


@pytest.mark.kafka
@pytest.mark.django_db
def test_the_consoles_own_delete_leaves_the_list_at_once(
        redis_node, local_cluster, fresh_groups_table, topic_factory, commit, client_for, admin):
    topic = topic_factory("own-delete")
    group = f"own-delete-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 2})
    group_snapshot_refresh("local", wait_s=30)
    client = client_for(admin)
    assert _listed(_page(client, group)[1], group)

    done = client.post(f"/clusters/local/groups/{group}/delete/", {"confirm": group, "reason": "retired"})

    assert done.status_code == 302 and done["Location"] == reverse("offsets:groups", args=["local"])
    shared_table.forget_redis_state()  # another process: it learns of the delete from Redis, not from this one
    status, body = _page(client, group)
    assert status == 200 and not _listed(body, group) and "0 groups" in body


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_page_asks_kafka_about_its_own_groups_only(
        redis_node, local_cluster, fresh_groups_table, topic_factory, commit, group_calls, client_for, viewer,
        monkeypatch):
    from offsets import views

    topic = topic_factory("paged-table")
    prefix = f"paged-table-{uuid.uuid4().hex[:6]}"
    groups = [f"{prefix}-{i}" for i in range(5)]
    for group in groups:
        commit(group, {(topic, 0): 1})
    group_snapshot_refresh("local", wait_s=30)
    monkeypatch.setattr(views, "GROUPS_PAGE_SIZE", 2)
    group_calls.clear()
    client = client_for(viewer)

    status, body = _page(client, prefix, page=2)

    assert status == 200 and _listed(body, groups[2]) and _listed(body, groups[3]) and "5 groups" in body
    assert not any(name.startswith("list_groups") for name, _ in group_calls)
    asked = [ids for _, ids in group_calls]
    assert asked and all(ids is not None and set(ids) <= set(groups[2:4]) for ids in asked)

    group_calls.clear()
    for params in ({}, {"sort": "lag"}, {"status": "ERR"}, {"type": "consumer"}, {"page": "9"}):
        assert client.get("/clusters/local/groups/", params).status_code == 200
    assert not any(name.startswith("list_groups") for name, _ in group_calls)
    assert all(len(ids) <= 2 for _, ids in group_calls)


@pytest.mark.kafka
@pytest.mark.django_db
def test_the_page_says_it_is_being_built_then_how_old_the_list_is(
        redis_node, local_cluster, fresh_groups_table, client_for, viewer):
    client = client_for(viewer)

    response = client.get("/clusters/local/groups/")

    assert response.status_code == 200
    assert escape(MSG_GROUPS_BUILDING.format(cluster="local")) in response.content.decode()
    TABLE.wait_for_refresh("local")  # the rebuild the page started, in a thread of this process
    body = client.get("/clusters/local/groups/", headers={"HX-Request": "true"}).content.decode()
    assert "Groups listed " in body and " s ago" in body and escape(MSG_GROUPS_NOT_SHARED) not in body


@pytest.mark.kafka
@pytest.mark.django_db
def test_without_redis_each_process_builds_its_own_list_in_the_background(
        local_cluster, fresh_groups_table, settings, topic_factory, commit, client_for, viewer):
    from devstack.kafka import free_port

    settings.REDIS_URL = f"redis://:nobody@127.0.0.1:{free_port()}/0"  # nothing listens there
    shared_table.forget_redis_state()
    topic = topic_factory("no-redis-groups")
    group = f"no-redis-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 1})
    client = client_for(viewer)

    first = client.get("/clusters/local/groups/", {"q": group})
    assert first.status_code == 200
    assert escape(MSG_GROUPS_BUILDING.format(cluster="local")) in first.content.decode()
    TABLE.wait_for_refresh("local")
    status, body = _page(client, group)
    assert status == 200 and _listed(body, group) and escape(MSG_GROUPS_NOT_SHARED) in body


@pytest.mark.kafka
@pytest.mark.django_db(transaction=True)
def test_a_workers_lag_sweep_writes_the_list_with_its_statuses_and_pages_here_only_read_it(
        redis_node, celery_worker_process, local_cluster, fresh_groups_table, topic_factory, produce, commit,
        group_calls, client_for, viewer):
    from console.clusters.selectors import cluster_admin
    from console.shared_table import connection_version
    from offsets.models import GroupLagStatus
    from offsets.tasks import refresh_group_snapshot, sample_lag

    topic = topic_factory("swept-table")
    produce(topic, [(0, None, b"x", None)] * 5)
    group = f"swept-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 1})

    sample_lag.delay().get(timeout=120)

    status = GroupLagStatus.objects.get(cluster="local", group=group).status
    snapshot = TABLE.read("local", connection_version(cluster_admin("local").connection))
    row = next(r for r in snapshot.rows if r.group_id == group)
    assert (row.status, row.lag) == (status, 4)  # the lag the sweep stored (no verdict after one sample yet)
    # Beat's own entry leaves a list the sweep has just written alone.
    assert refresh_group_snapshot.delay("local").get(timeout=60)["skipped"]
    shared_table.forget_redis_state()  # nothing decoded here before: what this process shows comes from Redis
    group_calls.clear()
    code, body = _page(client_for(viewer), group, sort="lag")
    assert code == 200 and _listed(body, group)
    assert not any(name.startswith("list_groups") for name, _ in group_calls)
