"""Group pages on the real broker: list, detail, preview → execute → revert, refusals, roles."""

import re
import time
import uuid

import pytest

from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef
from offsets.selectors import group_snapshot_refresh

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
HTMX = {"HX-Request": "true"}


def _committed(group):
    return cluster_admin("local").group_offsets([group])[group]


def test_groups_list_and_filters(client_for, viewer, seeded, local_cluster):
    client = client_for(viewer)
    # Made behind the console's back: the next snapshot lists it. A rebuild another thread began before the group
    # existed may be the one this refresh waits for, so refresh until one lists it.
    deadline = time.monotonic() + 60
    while True:
        group_snapshot_refresh("local", wait_s=30)
        body = client.get("/clusters/local/groups/", {"q": seeded["group"]}).content.decode()
        if seeded["group"] in body or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert seeded["group"] in body, "the group was never listed"
    table = body[body.index('id="group-table"'):]
    row = table[table.index(seeded["group"]):]
    assert "<td>15</td>" in row[:row.find("</tr>")], row[:row.find("</tr>")]  # total lag 12 + 3
    assert seeded["group"] not in client.get("/clusters/local/groups/?state=Stable").content.decode()


def test_groups_list_pages_and_asks_kafka_about_one_page_only(client_for, viewer, topic_factory, produce, commit,
                                                               local_cluster, monkeypatch):
    from offsets import selectors, views
    from offsets.models import GroupLagStatus

    topic = topic_factory("paged")
    produce(topic, [(0, None, b"x", None)] * 9)
    prefix = f"paged-{uuid.uuid4().hex[:6]}"
    groups = [f"{prefix}-{i}" for i in range(3)]
    for i, group in enumerate(groups):
        commit(group, {(topic, 0): i})
        GroupLagStatus.objects.create(cluster="local", group=group, status="OK", reason="", totals=[9 - i])
    group_snapshot_refresh("local", wait_s=30)
    monkeypatch.setattr(views, "GROUPS_PAGE_SIZE", 2)
    fetched = []
    original = selectors.committed_offsets

    def spy(admin, group_ids):  # records which groups the page asks Kafka about, then asks the real broker
        fetched.extend(group_ids)
        return original(admin, group_ids)

    monkeypatch.setattr(selectors, "committed_offsets", spy)
    client = client_for(viewer)

    first = client.get("/clusters/local/groups/", {"q": prefix}).content.decode()
    assert "3 groups, page 1 of 2" in first and groups[0] in first and groups[1] in first and groups[2] not in first
    assert sorted(fetched) == groups[:2]
    second = client.get("/clusters/local/groups/", {"q": prefix, "page": 2}).content.decode()
    assert groups[2] in second and "<td>7</td>" in second and groups[0] not in second
    by_lag = client.get("/clusters/local/groups/", {"q": prefix, "sort": "lag"}).content.decode()
    assert by_lag.index(groups[0]) < by_lag.index(groups[1]) and groups[2] not in by_lag  # 9 and 8 before 7
    by_lag_reversed = client.get("/clusters/local/groups/", {"q": prefix, "sort": "lag", "page": 2}).content.decode()
    assert groups[2] in by_lag_reversed


def _row(body: str, group: str) -> str:
    return body.split(f'<tr data-group="{group}">')[1].split("</tr>")[0]


def test_groups_list_shows_the_lag_its_status_was_judged_on_and_asks_offsets_only_of_groups_not_sampled(
        client_for, viewer, topic_factory, produce, commit, local_cluster, monkeypatch):
    from offsets import selectors
    from offsets.lag.sampler import lag_sample

    topic = topic_factory("judged", partitions=2)
    produce(topic, [(0, None, b"x", None)] * 6 + [(1, None, b"y", None)] * 4)
    prefix = f"judged-{uuid.uuid4().hex[:6]}"
    swept, fresh = f"{prefix}-swept", f"{prefix}-fresh"
    commit(swept, {(topic, 0): 1, (topic, 1): 1})  # lag 5 + 3
    lag_sample(cluster="local")
    commit(swept, {(topic, 0): 6, (topic, 1): 4})  # caught up since the sweep
    commit(fresh, {(topic, 0): 2})  # lag 4, not sampled yet
    group_snapshot_refresh("local", wait_s=30)
    fetched = []
    original = selectors.committed_offsets

    def spy(admin, group_ids):
        fetched.extend(group_ids)
        return original(admin, group_ids)

    monkeypatch.setattr(selectors, "committed_offsets", spy)

    body = client_for(viewer).get("/clusters/local/groups/", {"q": prefix}).content.decode()

    assert f"<td>{topic}</td>" in _row(body, swept) and "<td>8</td>" in _row(body, swept)
    assert 'class="hint">Empty</span>' in _row(body, swept)  # asked now: nobody is a member
    assert f"<td>{topic}</td>" in _row(body, fresh) and "<td>4</td>" in _row(body, fresh)
    assert fetched == [fresh]
    # The group's own page reads the offsets live: caught up, and the status of the sample before is marked as
    # being re-checked (the offsets moved while nobody consumed).
    detail = client_for(viewer).get(f"/clusters/local/groups/{swept}/").content.decode()
    assert 'data-value="0">0<' in detail and 'id="changed-since"' in detail and 'id="total-lag" data-value="8"' in detail
    assert "No members" in client_for(viewer).get(f"/clusters/local/groups/{swept}/?tab=members").content.decode()


def test_group_detail_and_unknown_group(client_for, viewer, seeded, local_cluster):
    client = client_for(viewer)

    body = client.get(f"/clusters/local/groups/{seeded['group']}/").content.decode()
    assert "Empty" in body and 'data-value="12">12<' in body and "not sampled yet" in body
    assert "No members" in client.get(f"/clusters/local/groups/{seeded['group']}/?tab=members").content.decode()
    missing = client.get("/clusters/local/groups/ghost-group/")
    assert missing.status_code == 404 and "ghost-group" in missing.content.decode()


def test_preview_export_execute_then_revert(client_for, operator, seeded, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    client = client_for(operator)
    form = {"scope": "chosen", "partition": f"{topic}:0", "strategy": "shift-by", "shift": "-4"}

    preview = client.post(f"/clusters/local/groups/{group}/reset/", form, headers={"HX-Request": "true"})
    body = preview.content.decode()
    assert "<strong>4</strong>" in body and "-4" in body and _committed(group)[PartitionRef(topic, 0)] == 8
    fingerprint = body.split('name="fingerprint" value="')[1].split('"')[0]
    export = client.get(f"/clusters/local/groups/{group}/reset/export.csv", form)
    assert export.content.decode() == f"{topic},0,4\n"

    executed = client.post(f"/clusters/local/groups/{group}/reset/execute/",
                           {**form, "fingerprint": fingerprint, "reason": "re-read", "confirm": group},
                           headers={"HX-Request": "true"})
    assert executed.headers["HX-Redirect"].endswith(f"/groups/{group}/")
    assert _committed(group)[PartitionRef(topic, 0)] == 4

    outcome = AuditEvent.objects.get(outcome="success")
    revert_page = client.get(f"/clusters/local/groups/{group}/revert/{outcome.seq}/").content.decode()
    assert "<strong>8</strong>" in revert_page
    revert_fp = revert_page.split('name="fingerprint" value="')[1].split('"')[0]
    client.post(f"/clusters/local/groups/{group}/revert/{outcome.seq}/",
                {"fingerprint": revert_fp, "reason": "undo", "confirm": group})
    assert _committed(group)[PartitionRef(topic, 0)] == 8


def test_execute_with_a_stale_preview_is_refused(client_for, operator, seeded, commit, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    client = client_for(operator)
    form = {"scope": "all", "strategy": "to-earliest"}
    body = client.post(f"/clusters/local/groups/{group}/reset/", form).content.decode()
    fingerprint = body.split('name="fingerprint" value="')[1].split('"')[0]
    commit(group, {(topic, 1): 4})

    response = client.post(f"/clusters/local/groups/{group}/reset/execute/",
                           {**form, "fingerprint": fingerprint, "reason": "r", "confirm": group},
                           headers={"HX-Request": "true"})

    assert response.status_code == 409 and "changed since the preview" in response.content.decode()
    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 4}


def test_bad_date_is_a_clear_error(client_for, operator, seeded, local_cluster):
    response = client_for(operator).post(f"/clusters/local/groups/{seeded['group']}/reset/",
                                         {"scope": "all", "strategy": "to-datetime", "value": "yesterday"},
                                         headers={"HX-Request": "true"})

    assert response.status_code == 400 and "does not contain a &#x27;T&#x27;" in response.content.decode()


def test_viewer_cannot_reset_and_operator_cannot_delete(client_for, viewer, operator, seeded, local_cluster):
    group = seeded["group"]
    form = {"scope": "all", "strategy": "to-earliest", "fingerprint": "x", "reason": "r", "confirm": group}

    assert client_for(viewer).post(f"/clusters/local/groups/{group}/reset/execute/", form).status_code == 403
    assert client_for(viewer).get(f"/clusters/local/groups/{group}/reset/").status_code == 403
    assert client_for(operator).post(f"/clusters/local/groups/{group}/delete/",
                                     {"confirm": group, "reason": "r"}).status_code == 403
    assert _committed(group) != {} and not AuditEvent.objects.exists()


def test_admin_deletes_a_topics_offsets_after_a_preview(client_for, admin, seeded, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    client = client_for(admin)

    preview = client.post(f"/clusters/local/groups/{group}/offsets/delete/preview/", {"topic": topic, "partitions": "1"})
    assert "<td>2</td>" in preview.content.decode() and _committed(group)[PartitionRef(topic, 1)] == 2

    client.post(f"/clusters/local/groups/{group}/offsets/delete/",
                {"topic": topic, "partitions": "1", "confirm": group, "reason": "r"})
    assert _committed(group) == {PartitionRef(topic, 0): 8}


@pytest.mark.parametrize(("strategy", "status", "lag"), [("to-latest", "OK", 0), ("to-earliest", "", 22)])
def test_a_reset_here_is_judged_again_at_once_and_the_page_and_list_agree(client_for, operator, seeded,
                                                                          local_cluster, strategy, status, lag):
    """A stopped group (STOP, lag 15) reset: its status, its total lag, the groups list and the chart's last point
    are one new sample, taken right after the reset. Forward, the lag is gone: OK. Back to the log start (p0 3 of 20,
    p1 0 of 5: lag 22), the status waits for enough samples since the reset, and says so."""
    from datetime import UTC, datetime, timedelta

    from offsets.lag.sampler import lag_sample
    from offsets.lag.selectors import group_lag_chart
    from offsets.models import GroupLagStatus

    group = seeded["group"]
    now = datetime.now(UTC)
    for seconds in (60, 30, 0):
        lag_sample(cluster="local", now=now - timedelta(seconds=seconds))
    assert GroupLagStatus.objects.get(group=group).status == "STOP"
    client = client_for(operator)
    form = {"scope": "all", "strategy": strategy}
    body = client.post(f"/clusters/local/groups/{group}/reset/", form, headers=HTMX).content.decode()
    fingerprint = body.split('name="fingerprint" value="')[1].split('"')[0]
    client.post(f"/clusters/local/groups/{group}/reset/execute/",
                {**form, "fingerprint": fingerprint, "reason": "r", "confirm": group}, headers=HTMX)

    row = GroupLagStatus.objects.get(group=group)
    assert row.sampled_at > now and (row.status, row.totals[-1]) == (status, lag)
    page = client.get(f"/clusters/local/groups/{group}/").content.decode()
    verdict = re.search(r'id="lag-verdict">([^<]+)<', page).group(1)
    assert verdict == (status or "not judged") and f'id="total-lag" data-value="{lag}"' in page
    assert f"Total, read live</th><td class=\"num\">{lag}</td>" in page and 'id="changed-since"' not in page
    assert ("re-checking" in page) == (strategy == "to-earliest")
    group_snapshot_refresh("local", wait_s=30)
    listed = client.get("/clusters/local/groups/", {"q": group}).content.decode()
    assert f"<td>{lag}</td>" in _row(listed, group)
    (line,) = group_lag_chart("local", group).geometry.lines
    assert line.last == lag
