"""Four-eyes changes in the browser (Debian's chromium), at 1400 px and 390 px: an operator asks for a reset of a
group with a hostile name on a protected cluster, another operator finds it in the list and approves it, and the
pages (list, request, protection card) neither overflow a phone's width nor log errors."""

from __future__ import annotations

import uuid

import pytest

from changes.models import ChangeRequest
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDE, PHONE = {"width": 1400, "height": 900}, {"width": 390, "height": 844}


def _open(browser, live_server, user, viewport):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.goto("/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "pw-" + user.username)
    page.click("button[type=submit]")
    page.wait_for_url("**/clusters/")
    return context, page, problems


def _fits(page, url: str, width: int) -> None:
    page.goto(url)
    page.wait_for_load_state("networkidle")
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, (url, scroll)


def test_ask_and_approve_in_the_browser_at_both_widths(browser, live_server, make_user, protect, topic_factory,
                                                       produce, commit):
    topic = topic_factory("fe-browser", partitions=2)
    produce(topic, [(p, None, b"v", None) for p in (0, 1) for _ in range(8)])
    group = f"team/eu west #1 50% <b>'quote\"</b> ünï-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 3, (topic, 1): 5})
    protect(webhook="")
    asker, approver = make_user("otto", "operator"), make_user("olga", "operator")
    make_user("ada2", "admin")

    context, page, problems = _open(browser, live_server, asker, WIDE)
    from django.urls import reverse

    page.goto(reverse("offsets:reset", args=["local", group]))
    page.select_option("select[name=scope]", "all")
    page.select_option("select[name=strategy]", "to-earliest")
    page.click("button:has-text('Preview')")
    preview = page.locator("#reset-preview")
    preview.locator("#protected-note").wait_for()
    preview.locator("input[name=reason]").fill("replay after the bad deploy")
    preview.locator("input[name=confirm]").fill(group)
    preview.get_by_role("button", name="Ask for approval of this plan").click()
    page.wait_for_url("**/changes/*/")
    assert group in page.locator("#change-facts").inner_text() or group in page.locator("#change-plan").inner_text()
    assert "your own request" in page.content() and page.locator("#approve-form").count() == 0
    change = ChangeRequest.objects.get()
    assert cluster_admin("local").group_offsets([group])[group] == {PartitionRef(topic, 0): 3,
                                                                     PartitionRef(topic, 1): 5}
    assert problems == []
    context.close()

    for viewport in (WIDE, PHONE):
        context, page, problems = _open(browser, live_server, approver, viewport)
        for url in (reverse("changes:list"), reverse("changes:detail", args=[change.pk])):
            _fits(page, url, viewport["width"])
        assert problems == [], problems
        context.close()

    context, page, problems = _open(browser, live_server, approver, PHONE)
    page.goto(reverse("changes:list"))
    page.get_by_role("link", name=f"#{change.pk}").click()
    page.locator("#approve-form input[name=reason]").fill("plan checked")
    page.get_by_role("button", name="Approve and execute").click()
    page.locator("#change-facts").get_by_text("executed").wait_for()
    assert cluster_admin("local").group_offsets([group])[group] == {PartitionRef(topic, 0): 0,
                                                                     PartitionRef(topic, 1): 0}
    assert "group.offsets.reset" in page.locator("#change-trail").inner_text()
    assert problems == []
    context.close()


def test_the_protection_card_at_both_widths(browser, live_server, make_user, local_cluster):
    from django.urls import reverse

    admin = make_user("adele", "admin")
    for viewport in (WIDE, PHONE):
        context, page, problems = _open(browser, live_server, admin, viewport)
        _fits(page, reverse("clusters:edit", args=["local"]), viewport["width"])
        page.locator("#protection-card").wait_for()
        assert problems == [], problems
        context.close()
    context, page, problems = _open(browser, live_server, admin, WIDE)
    page.goto(reverse("clusters:edit", args=["local"]))
    card = page.locator("#protection-card")
    card.locator("input[name=whole_cluster]").uncheck()
    card.locator("textarea[name=group_patterns]").fill("team/eu west #*\nre:billing-(eu|us)")
    card.locator("input[name=reason]").first.fill("prod")
    card.get_by_role("button", name="Protect local").click()
    page.locator("#protection-card #protection-state").get_by_text("the topics and groups below").wait_for()
    from changes.models import Protection

    assert Protection.objects.get(cluster="local").group_patterns == ["team/eu west #*", "re:billing-(eu|us)"]
    assert problems == []
    context.close()
