"""Creating a connector in chromium against the session's Connect worker: each setting of the plugin once, Connect's
refusal shown at its settings with everything typed still there, then the connector created; the form fits a phone."""

from __future__ import annotations

import re

import pytest

from tests.connect.conftest import FILE_SINK

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _watch(page) -> list[str]:
    problems: list[str] = []
    # A refused form is answered 4xx by design (its messages go to its fields), which chromium logs as well.
    page.on("console", lambda m: problems.append(m.text)
            if m.type == "error" and not re.search(r"status of 4\d\d", m.text) else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    return problems


def test_the_form_submits_each_field_once_and_keeps_what_was_typed_on_a_refusal(
        logged_in_page, make_user, browser, live_server, connect_cluster, connect_rest, topic_factory, tmp_path):
    topic = topic_factory("sink-in")
    before = sorted(connect_rest("GET", "connectors")[1])  # what other tests of the session left running
    user = make_user("connect-oncall", "operator")
    page = logged_in_page(user)
    problems = _watch(page)

    page.goto("/clusters/local/connect/local/create/")
    page.select_option("select[name=plugin]", FILE_SINK)
    page.click("button:has-text('Show its settings')")
    form = page.locator("#create-form")
    names = form.locator("[name^='cfg:']").evaluate_all("nodes => nodes.map(n => n.name)")
    assert len(names) == len(set(names)) and names[0] == "cfg:name"
    assert form.locator("[name='cfg:name']").count() == form.locator("[name='cfg:topics']").count() == 1

    form.locator("[name='cfg:name']").fill("browser sink")
    form.locator("[name='cfg:file']").fill(str(tmp_path / "sink.txt"))
    form.locator("[name='cfg:tasks.max']").fill("zero")
    form.locator("[name=reason]").fill("a sink for the test")
    form.locator("button[type=submit]").click()
    errors = form.locator(".field-error")
    errors.first.wait_for()
    tasks_label = form.locator("label:has([name='cfg:tasks.max'])")
    assert "Invalid value zero" in tasks_label.locator(".field-error").first.inner_text()
    assert "topics" in form.locator("label:has([name='cfg:topics']) .field-error").inner_text()
    texts = errors.all_inner_texts()
    assert len(texts) == 3 and page.locator("body").inner_text().count("Invalid value zero") == 1  # one a setting
    assert form.locator("[name='cfg:name']").input_value() == "browser sink"  # nothing typed is lost
    assert form.locator("[name='cfg:file']").input_value() == str(tmp_path / "sink.txt")
    assert form.locator("[name=reason]").input_value() == "a sink for the test"
    assert page.url.endswith(f"/create/?plugin={FILE_SINK}")
    assert sorted(connect_rest("GET", "connectors")[1]) == before  # nothing created

    form.locator("[name='cfg:tasks.max']").fill("2")
    form.locator("[name='cfg:topics']").fill(topic)
    form.locator("button[type=submit]").click()
    page.get_by_text("Connector browser sink created").wait_for()
    stored = connect_rest("GET", "connectors", "browser sink")[1]["config"]
    assert (stored["topics"], stored["tasks.max"], stored["file"]) == (topic, "2", str(tmp_path / "sink.txt"))
    assert problems == []

    phone = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    try:
        small = phone.new_page()
        small_problems = _watch(small)
        small.goto("/accounts/login/")
        small.fill("input[name=username]", user.username)
        small.fill("input[name=password]", "pw-" + user.username)
        small.click("button[type=submit]")
        small.wait_for_url("**/clusters/")
        small.goto(f"/clusters/local/connect/local/create/?plugin={FILE_SINK}")
        small.locator("details.settings-group").nth(1).locator("summary").click()
        small.screenshot(path=str(tmp_path / "connector-create-phone.png"), full_page=True)
        assert small.evaluate("document.documentElement.scrollWidth") <= 390
        assert small_problems == []
    finally:
        phone.close()
