"""Groups and a topic with the names Kafka accepts and tidy fixtures never have, created on the real broker and
walked through every page in the browser: list, group page, lag chart, reset preview, CSV export, execute, audit,
revert, topic page and messages. No page may fail, and no name may run as markup."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from console.audit.models import AuditEvent

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def hostile_names(token: str) -> list[str]:
    return [
        f"team/eu west {token}",
        f"50% #1 ?x=1&y=2 {token}",
        f"<script>alert('{token}')</script>",
        f"quote\"s 'n' back\\slash {token}",
        f"ünïcødé-群组-{token}",
        f"~2F..%2F/{token}/",
        f"=cmd|' /C calc'!A0 {token}",
        f"{token}-" + "x" * 260,
    ]


def test_every_page_works_for_hostile_group_names_and_a_249_character_topic(
        logged_in_page, make_user, local_cluster, topic_factory, produce, commit, tmp_path):
    token = uuid.uuid4().hex[:8]
    topic = f"{token}.a_b-" + "t" * (249 - len(token) - 5)
    assert len(topic) == 249
    from console.clusters.selectors import cluster_admin

    cluster_admin("local").create_topic(topic, partitions=2, replication_factor=1, configs={})
    from topics.selectors import topic_snapshot_note

    # Laid over whatever table the pages read, as the console's own creations are: a rebuild of the session's
    # table that began before the topic existed (one outlasting an earlier test's broker drills) may still be
    # holding the rebuild lock, and refreshing would wait for it.
    topic_snapshot_note("local", topic)
    produce(topic, [(p, b"k", b"v", None) for p in range(2)] * 3)
    groups = hostile_names(token)
    for group in groups:
        commit(group, {(topic, 0): 1, (topic, 1): 2})
    from offsets.selectors import group_snapshot_refresh

    group_snapshot_refresh("local", wait_s=30)  # made behind the console's back: the next snapshot lists them

    page = logged_in_page(make_user("hostile", "operator"))
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    failures = []
    page.on("response", lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 500 else None)

    page.goto(f"/clusters/local/groups/?q={token}")
    listed = page.locator("#group-table").inner_text()
    for group in groups:
        assert group in listed, group

    for group in groups:
        page.goto(f"/clusters/local/groups/?q={token}")
        page.get_by_role("link", name=group, exact=True).click()
        page.locator("h1").filter(has_text=group[:40]).wait_for()
        page.click("nav.tabs a:has-text('History')")
        assert page.locator("#lag-chart").count() == 1
        page.click("a:has-text('Reset offsets')")
        page.select_option("select[name=scope]", "all")
        page.select_option("select[name=strategy]", "to-earliest")
        page.click("button:has-text('Preview')")
        preview = page.locator("#reset-preview")
        preview.get_by_text("Execute this plan").wait_for()
        with page.expect_download() as download:
            preview.get_by_text("Export this plan as CSV").click()
        exported = open(download.value.path()).read()
        assert exported == f"{topic},0,0\n{topic},1,0\n"
        preview.locator("input[name=reason]").fill("hostile names")
        preview.locator("input[name=confirm]").fill(group)
        page.click("button:has-text('Execute this plan')")
        page.get_by_text(f"Offsets of {group} reset.").wait_for()

        event = AuditEvent.objects.get(outcome="success", target=f"group:{group}")
        page.goto(f"/audit/{event.seq}/")
        assert group in page.locator("main").inner_text()
        page.click("a:has-text('Revert this reset')")
        page.fill("input[name=reason]", "undo")
        page.fill("input[name=confirm]", group)
        page.click("button:has-text('Execute the revert')")
        page.get_by_text(f"back to those before audit event #{event.seq}").wait_for()

    page.goto(f"/audit/?target=group:{groups[0]}")
    assert groups[0] in page.locator("#audit-table").inner_text()
    page.goto(f"/clusters/local/topics/?q={token}")
    link = page.get_by_role("link", name=topic)
    try:
        link.wait_for(timeout=15_000)
    except PlaywrightTimeout:  # seen once in a while in CI: what the list said instead is the clue
        said = page.locator("main").inner_text()[:2000]
        pytest.fail(f"the topic list did not link {topic[:20]}…; the page said:\n{said}")
    link.click()
    page.locator("h1").filter(has_text=topic[:40]).wait_for()
    page.goto(f"/clusters/local/topics/{topic}/messages/?partition=1&offset=0")
    assert page.locator("#records").inner_text().count("v") >= 3
    page.screenshot(path=str(tmp_path / "hostile-topic-messages.png"), full_page=True)

    assert dialogs == [] and failures == []
    assert AuditEvent.objects.filter(action="group.offsets.reset", outcome="success").count() == 2 * len(groups)
