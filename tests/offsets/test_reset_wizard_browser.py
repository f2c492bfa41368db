"""The reset wizard in chromium: the whole flow with a mouse, a preview with the keyboard alone, and a preview and
execute with JavaScript turned off."""

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _committed(group):
    return cluster_admin("local").group_offsets([group])[group]


def _tab_to(page, selector: str, most: int = 60) -> None:
    """Tab until `selector` has the focus: proves it is reachable from the keyboard."""
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement && document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_the_wizard_with_mouse_keyboard_and_without_javascript(logged_in_page, make_user, browser, live_server,
                                                              local_cluster, seeded):
    group, topic, base = seeded["group"], seeded["topic"], seeded["base"]
    user = make_user("wizard-oncall", "operator")
    page = logged_in_page(user)

    # The whole flow: p0 and p1 ticked, back to ten minutes after p0's first record, in Oslo time.
    page.goto(f"/clusters/local/groups/{group}/")
    page.click("a:has-text('Reset offsets')")
    page.check(f"input[name=partition][value='{topic}:0']")
    page.check(f"input[name=partition][value='{topic}:1']")
    page.select_option("select[name=strategy]", "to-datetime")
    assert page.locator("fieldset[data-strategies=to-offset]").is_hidden()  # only to-datetime's inputs show
    oslo = datetime.fromtimestamp((base + 10 * 60_000) // 1000, ZoneInfo("Europe/Oslo"))
    page.fill("input[name=at]", oslo.strftime("%Y-%m-%dT%H:%M:%S"))
    page.fill("input[name=zone]", "Europe/Oslo")
    page.click("button:has-text('Preview')")
    preview = page.locator("#reset-preview")
    preview.get_by_text("Execute this plan").wait_for()
    # p0 8 -> 10 and p1 2 -> 5 (its records are all older): 5 records skipped, none re-read
    # lag now 12 + 3, after 10 + 0
    assert preview.locator("#reset-totals tbody tr").first.inner_text().split() == [topic, "2", "0", "5", "15", "→",
                                                                                     "10"]
    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}
    preview.locator("input[name=reason]").fill("replay after the bad deploy")
    preview.locator("input[name=confirm]").fill(group)
    page.click("button:has-text('Execute this plan')")
    page.get_by_text(f"Offsets of {group} reset.").wait_for()
    assert _committed(group) == {PartitionRef(topic, 0): 10, PartitionRef(topic, 1): 5}
    partitions = page.locator("#partitions tbody tr")
    assert partitions.nth(0).locator("td").all_inner_texts()[:3] == [topic, "0", "10"]
    assert partitions.nth(1).locator("td").all_inner_texts()[:3] == [topic, "1", "5"]

    # The keyboard alone: Tab to p0, Space ticks it, type the strategy's name, Enter on Preview.
    page.goto(f"/clusters/local/groups/{group}/reset/")
    _tab_to(page, f"input[name=partition][value='{topic}:0']")
    page.keyboard.press("Space")
    _tab_to(page, "select[name=strategy]")
    page.keyboard.type("to-latest")
    _tab_to(page, "#reset-form button[type=submit]")
    page.keyboard.press("Enter")
    page.locator("#reset-totals").wait_for()
    assert page.locator("#reset-totals tbody tr").first.inner_text().split() == [topic, "1", "0", "10", "10", "→",
                                                                                  "0"]  # 10 -> 20

    # Without JavaScript: plain forms, the preview in a whole page, execute answered with a redirect.
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        plain = context.new_page()
        plain.set_default_timeout(15_000)
        plain.goto("/accounts/login/")
        plain.fill("input[name=username]", user.username)
        plain.fill("input[name=password]", "pw-" + user.username)
        plain.click("button[type=submit]")
        plain.goto(f"/clusters/local/groups/{group}/reset/")
        plain.select_option("select[name=scope]", "chosen")  # no script switches it from all topics
        plain.check(f"input[name=partition][value='{topic}:0']")
        plain.select_option("select[name=strategy]", "to-offset")
        plain.fill("input[name=offset]", "4")
        plain.click("button:has-text('Preview')")
        assert plain.locator("#reset-form input[name=partition][value$=':0']").is_checked()  # the form as it was sent
        assert plain.locator("#reset-totals tbody tr").first.inner_text().split() == [topic, "1", "6", "0", "10", "→",
                                                                                       "16"]
        plain.fill("#reset-execute input[name=reason]", "no-js check")
        plain.fill("#reset-execute input[name=confirm]", group)
        plain.click("button:has-text('Execute this plan')")
        plain.get_by_text(f"Offsets of {group} reset.").wait_for()
        assert plain.url.endswith(f"/groups/{group}/")
    finally:
        context.close()
    assert _committed(group) == {PartitionRef(topic, 0): 4, PartitionRef(topic, 1): 5}
