"""The frame as a person meets it, in Debian's chromium, served as `make run` serves it (gunicorn, DEBUG off,
static files from WhiteNoise): every page in the navigation loads without a console error
and without sideways scrolling on a phone; the navigation is one line on a wide screen; a refused form keeps the
page and what was typed and shows the message at its field, in view; a request shows it is working and cannot be
sent twice; the dark theme keeps text readable (axe-core's contrast rule); the README's screenshots are made here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from console.paths import PROJECT_DIR

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]
AXE = PROJECT_DIR / ".cache" / "axe-core" / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = PROJECT_DIR / "docs" / "screenshots"
WIDE, PHONE = {"width": 1400, "height": 900}, {"width": 390, "height": 844}


@pytest.fixture
def cluster_with_data(local_cluster, topic_factory, produce, commit):
    topic = topic_factory("orders", partitions=3, configs={"retention.ms": "86400000"})
    produce(topic, [(i % 3, f"ord-{i}".encode(), json.dumps({"id": i, "amount": i * 1.5}).encode(),
                     [("trace", f"{i:04x}".encode())]) for i in range(60)])
    group = "billing-face"
    commit(group, {(topic, 0): 5, (topic, 1): 7, (topic, 2): 9})
    from offsets.selectors import group_snapshot_refresh
    from topics.selectors import topic_snapshot_refresh

    topic_snapshot_refresh("local", wait_s=30)
    group_snapshot_refresh("local", wait_s=30)
    return {"topic": topic, "group": group}


def _unexpected(problems: list[str]) -> list[str]:
    """Console errors other than the browser's own line for an answer of 400 to a refused request (the refusal is
    the point of those tests, and chromium logs every 4xx fetch)."""
    return [p for p in problems if "the server responded with a status of 4" not in p]


def _open(browser, server, user, viewport, *, scheme="light", bypass_csp=False):
    context = browser.new_context(base_url=server.url, viewport=viewport, color_scheme=scheme,
                                  bypass_csp=bypass_csp)
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto("/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "pw-" + user.username)
    page.click("button[type=submit]")
    page.wait_for_url("**/clusters/")
    return context, page, problems


def _nav_links(page) -> list[str]:
    hrefs = page.eval_on_selector_all(".mainnav .menu-list a[href]", "links => links.map(a => a.getAttribute('href'))")
    return sorted(set(hrefs))


def test_every_page_in_the_navigation_at_both_widths(browser, run_style_web, admin, cluster_with_data):
    context, page, problems = _open(browser, run_style_web, admin, WIDE)
    page.goto("/clusters/local/")
    links = _nav_links(page)
    topic, group = cluster_with_data["topic"], cluster_with_data["group"]
    pages = [*links, f"/clusters/local/topics/{topic}/", f"/clusters/local/topics/{topic}/?tab=configuration",
             f"/clusters/local/groups/{group}/", f"/clusters/local/groups/{group}/reset/"]
    assert len(links) >= 18, links
    for url in pages:
        problems.clear()
        response = page.goto(url)
        page.wait_for_load_state("networkidle")
        assert response.status == 200, (url, response.status)
        assert problems == [], (url, problems)
        # One line of navigation: every menu's button sits on the same row, and the bar is one row high.
        middles = page.eval_on_selector_all(
            ".topbar summary, .topbar .brand",
            "els => els.map(e => { const r = e.getBoundingClientRect(); return Math.round(r.top + r.height / 2); })")
        assert max(middles) - min(middles) <= 4 and page.eval_on_selector(".topbar", "e => e.offsetHeight") <= 56, url
        assert page.title().endswith("Kafka console") and page.title() != "Kafka console", (url, page.title())
    context.close()

    context, page, problems = _open(browser, run_style_web, admin, PHONE)
    for url in pages:
        problems.clear()
        page.goto(url)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], (url, width)
        assert problems == [], (url, problems)
    page.goto("/clusters/local/")
    assert not page.locator(".mainnav").is_visible()  # the menu waits behind its button
    page.click("[data-nav-toggle]")
    assert page.locator(".mainnav").is_visible()
    context.close()


def _in_view(page, locator) -> bool:
    box = locator.bounding_box()
    height = page.viewport_size["height"]
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def test_a_refused_filter_keeps_the_page_and_says_so_at_the_field(browser, run_style_web, viewer, cluster_with_data):
    context, page, problems = _open(browser, run_style_web, viewer, WIDE)
    page.goto("/clusters/local/topics/")
    page.check("input[name=regex]")
    page.wait_for_load_state("networkidle")
    rows_before = page.locator("#topic-table tbody tr").count()
    page.fill("input[name=q]", "uxr-(orders")  # a regex typed half-way
    error = page.locator("input[name=q] ~ .field-error, label:has(input[name=q]) .field-error")
    error.wait_for()
    assert "incomplete" in error.inner_text()
    assert page.locator(".mainnav").count() == 1 and page.input_value("input[name=q]") == "uxr-(orders"
    assert page.locator("input[name=q]").get_attribute("aria-invalid") == "true"
    assert _in_view(page, error)
    assert page.locator("#topic-table tbody tr").count() == rows_before  # the list is kept, not wiped
    page.fill("input[name=q]", "orders")  # finished: the error goes, the list filters
    page.wait_for_function("() => !document.querySelector('.field-error')")
    assert _unexpected(problems) == []
    context.close()


def test_a_refused_config_edit_shows_the_brokers_reason_next_to_the_field(browser, run_style_web, admin,
                                                                         cluster_with_data):
    context, page, problems = _open(browser, run_style_web, admin, WIDE)
    page.goto(f"/clusters/local/topics/{cluster_with_data['topic']}/?tab=configuration")
    field = page.locator("textarea[name=set_values]")
    field.scroll_into_view_if_needed()
    field.fill("retention.ms=later")
    page.fill("form:has(textarea[name=set_values]) input[name=reason]", "shorter retention")
    page.locator("form:has(textarea[name=set_values]) button[type=submit]").first.click()
    error = page.locator(".field-error, .form-alert").first
    error.wait_for()
    assert "retention.ms" in error.inner_text() and _in_view(page, error)
    assert field.input_value() == "retention.ms=later" and page.locator(".mainnav").count() == 1
    assert _unexpected(problems) == []
    context.close()


def test_a_request_shows_it_is_working_and_cannot_be_sent_twice(browser, run_style_web, admin, cluster_with_data):
    context, page, problems = _open(browser, run_style_web, admin, WIDE)
    page.goto(f"/clusters/local/topics/{cluster_with_data['topic']}/?tab=configuration")
    held = []

    def hold(route):
        held.append(route)

    page.route(re.compile(r".*/configs/preview/$"), hold)
    page.fill("textarea[name=set_values]", "retention.ms=3600000")
    page.fill("form:has(textarea[name=set_values]) input[name=reason]", "shorter retention")
    button = page.locator("form:has(textarea[name=set_values]) button[type=submit]").first
    button.click()
    page.wait_for_function("() => document.querySelector('form:has(textarea[name=set_values]) button.is-busy')")
    assert button.is_disabled() and page.locator("#progress-bar.active").count() == 1
    held[0].continue_()
    page.wait_for_function("() => !document.querySelector('button.is-busy')")
    assert not button.is_disabled()
    assert len(held) == 1  # one click, one request
    context.close()


@pytest.mark.skipif(not AXE.exists(), reason="axe-core is fetched by `make test-deps`")
def test_dark_mode_keeps_text_readable(browser, run_style_web, admin, cluster_with_data):
    topic, group = cluster_with_data["topic"], cluster_with_data["group"]
    for scheme in ("dark", "light"):
        # axe is injected as a script of the test's, which the console's CSP would refuse: this context ignores it.
        context, page, problems = _open(browser, run_style_web, admin, WIDE, scheme=scheme, bypass_csp=True)
        for url in ("/clusters/", "/clusters/local/", "/clusters/local/topics/", f"/clusters/local/topics/{topic}/",
                    f"/clusters/local/topics/{topic}/?tab=configuration", "/clusters/local/groups/",
                    f"/clusters/local/groups/{group}/", "/audit/", "/alerts/"):
            page.goto(url)
            page.wait_for_load_state("networkidle")
            page.add_script_tag(path=str(AXE))
            found = page.evaluate("""async () => {
                const result = await axe.run(document, {runOnly: {type: 'rule', values: ['color-contrast']}});
                return result.violations.flatMap(v => v.nodes.map(n => n.target.join(' ') + ': ' + n.failureSummary));
            }""")
            assert found == [], (scheme, url, found[:5])
        context.close()


def test_the_readmes_screenshots(browser, run_style_web, admin, cluster_with_data):
    """Made from the real pages on every run, so the README's pictures cannot drift from the console."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    topic, group = cluster_with_data["topic"], cluster_with_data["group"]
    context, page, problems = _open(browser, run_style_web, admin, WIDE)
    for name, url in (("dashboard", "/clusters/local/"), ("topic", f"/clusters/local/topics/{topic}/?tab=partitions"),
                      ("group", f"/clusters/local/groups/{group}/")):
        page.goto(url)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
        assert (SCREENSHOTS / f"{name}.png").stat().st_size > 10_000
    context.close()
    context, page, problems = _open(browser, run_style_web, admin, PHONE, scheme="dark")
    page.goto(f"/clusters/local/groups/{group}/")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(SCREENSHOTS / "group-phone-dark.png"))
    context.close()
