"""In the browser, on the real broker: a read_committed group waiting behind an open transaction is shown as
blocked by it (status, filter, group page with the transaction's id), and the topic page shows the last stable
offset and the open transaction; the transactions page lists it."""

from __future__ import annotations

import uuid

import pytest

from tests.fixtures.kafka import begin_transaction

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def waiting_group(kafka_node, topic_factory, produce, commit):
    """Topic: 3 committed records, then a transaction of 4 left open, then 2 plain records; a group that read
    everything a read_committed reader can and committed at the last stable offset (3)."""
    topic = topic_factory("tx-blocked", partitions=1)
    produce(topic, [(0, None, f"done-{i}".encode(), None) for i in range(3)])
    transactional_id = f"payments-{uuid.uuid4().hex[:8]}"
    producer = begin_transaction(kafka_node.bootstrap, topic, [f"pending-{i}".encode() for i in range(4)],
                                 transactional_id=transactional_id)
    produce(topic, [(0, None, b"later", None), (0, None, b"later", None)])
    group = f"ledger-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 3})
    yield topic, group, transactional_id
    producer.abort_transaction(15)


def test_a_group_behind_an_open_transaction_is_shown_as_blocked_by_it(logged_in_page, make_user, local_cluster,
                                                                       waiting_group):
    from offsets.lag.sampler import lag_sample
    from offsets.models import GroupLagStatus
    from offsets.selectors import group_snapshot_refresh

    topic, group, transactional_id = waiting_group
    for _ in range(3):  # the status needs a short window of samples
        lag_sample(cluster="local")
    status = GroupLagStatus.objects.get(cluster="local", group=group)
    assert status.status == "BLOCKED" and "behind an open transaction" in status.reason
    assert group_snapshot_refresh("local", wait_s=30) is not None  # what the sweep's task does after a sweep

    page = logged_in_page(make_user("oncall-browser", "viewer"))
    failures = []
    page.on("response", lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 500 else None)

    page.goto(f"/clusters/local/groups/?status=BLOCKED&q={group}")
    assert group in page.locator("#group-table").inner_text()
    assert "BLOCKED" in page.locator("#group-table").inner_text()

    page.goto(f"/clusters/local/groups/{group}/")
    status_line = page.locator("#lag-status").inner_text()
    assert "BLOCKED" in status_line and "waits for the open transaction of producer" in status_line
    assert transactional_id in status_line
    blocked = page.locator(".blocked-by-transaction")
    assert "blocked by an open transaction" in blocked.inner_text()
    assert transactional_id in blocked.inner_text()
    blocked.locator("a").click()
    page.wait_for_url(f"**/transactions/id/{transactional_id}/")
    assert "Ongoing" in page.locator("dl.facts").inner_text() and f"{topic}" in page.locator("dl.facts").inner_text()

    page.goto(f"/clusters/local/topics/{topic}/?tab=partitions")  # the topic page's partitions are a tab
    stable = page.locator("#partitions tbody tr").first.locator("td").nth(6).inner_text()  # the Last stable column
    assert stable.splitlines()[0] == "3" and "open transaction since" in stable and transactional_id in stable

    page.goto("/clusters/local/transactions/")
    assert transactional_id in page.locator("table.grid").first.inner_text()
    assert failures == []
