"""Forms that guide, in Debian's chromium: the produce form checks JSON as it is typed (where the error is) and
takes headers as rows; the search form shows the common filters and keeps the rest under "More filters"."""

from __future__ import annotations

import pytest

from records.selectors import record_at

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _watch(page) -> list[str]:
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    return problems


def test_the_produce_form_checks_json_as_typed_and_takes_header_rows(logged_in_page, make_user, topic_factory,
                                                                      local_cluster, tmp_path):
    topic = topic_factory("form-produce", partitions=3)
    page = logged_in_page(make_user("form-operator", "operator"))
    problems = _watch(page)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"/clusters/local/messages/{topic}/produce/")
    editor = page.locator("textarea[name=value]")
    box = editor.bounding_box()
    print(f"\nproduce value editor at 1400 px: {box['width']:.0f}x{box['height']:.0f} px")
    assert box["width"] > 900 and box["height"] > 250  # sized for a JSON document, not a 336x94 box
    editor.fill('{"order": 42,\n  "items": [1, 2,]\n}')
    hint = page.locator("[data-json-hint]")
    assert "Not valid JSON" in hint.inner_text() and "line 2" in hint.inner_text()
    assert editor.get_attribute("aria-invalid") == "true"
    editor.fill('{"order": 42, "items": [1, 2]}')
    assert hint.inner_text() == "Valid JSON."
    page.click("[data-json-format]")
    assert editor.input_value() == '{\n  "order": 42,\n  "items": [\n    1,\n    2\n  ]\n}'

    page.fill("input[name=key]", "order-42")
    page.select_option("select[name=partition]", "2")
    page.locator("input[name=header_name]").first.fill("trace")
    page.locator("input[name=header_value]").first.fill("t-1")
    page.click("[data-header-add]")
    page.locator("input[name=header_name]").nth(1).fill("dropped")
    page.click("[data-header-add]")
    page.locator("input[name=header_name]").nth(2).fill("span")
    page.locator("input[name=header_value]").nth(2).fill("s-9")
    page.locator("[data-header-remove]").nth(1).click()
    assert page.locator("input[name=header_name]").count() == 2
    page.fill("input[name=reason]", "form test")
    page.screenshot(path=str(tmp_path / "produce-1400.png"), full_page=True)
    page.click("button:has-text('Send')")
    page.wait_for_url(f"**/topics/{topic}/messages/2/0/")
    written = record_at("local", topic, 2, 0)
    assert written.key == b"order-42" and list(written.headers) == [("trace", b"t-1"), ("span", b"s-9")]
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/clusters/local/messages/{topic}/produce/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert problems == []


def test_the_search_form_shows_the_common_filters_first(logged_in_page, make_user, topic_factory, produce,
                                                        local_cluster, tmp_path):
    topic = topic_factory("form-search", partitions=2)
    produce(topic, [(i % 2, f"k{i}".encode(), b'{"n": %d}' % i, None) for i in range(40)])
    page = logged_in_page(make_user("form-viewer", "viewer"))
    problems = _watch(page)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"/clusters/local/messages/{topic}/search/")
    visible = [name for name in ("key", "value", "since", "until", "partitions", "key_regex", "jsonpath", "max_records")
               if page.locator(f"[name={name}]").first.is_visible()]
    assert visible == ["key", "value", "since", "until"]
    fields = "form.search-form input, form.search-form select, form.search-form textarea"
    shown = page.evaluate("(s) => [...document.querySelectorAll(s)].filter(f => f.type !== 'hidden' "
                          "&& f.checkVisibility()).length", fields)
    print(f"\nsearch form fields shown at first: {shown}")
    assert shown == 4
    assert page.locator("input[name=since]").get_attribute("placeholder") == "2026-11-29T02:41:00Z"
    page.fill("input[name=since]", "11/29/2026 2:41 PM")
    page.click("button:has-text('Search')")
    page.locator(".field-error").wait_for()
    assert "ISO 8601" in page.locator(".field-error").inner_text()
    assert problems[-1].endswith("status of 400 (Bad Request)")  # chromium logs the refusal asked for
    problems.clear()
    page.fill("input[name=since]", "")
    page.get_by_text("More filters").click()
    page.check("input[name=partitions][value='1']")
    page.fill("input[name=key]", "k3")
    page.click("button:has-text('Search')")
    page.locator(".search-ending").wait_for()
    assert sorted(page.locator("#matches .record .r-key").all_inner_texts()) == ["k3", "k31", "k33", "k35", "k37",
                                                                                 "k39"]
    # A shared link opens with its "more" filters showing.
    page.goto(page.url)
    assert page.locator("details.more-filters-panel[open]").count() == 1
    page.screenshot(path=str(tmp_path / "search-1400.png"), full_page=True)
    assert problems == []


def test_replay_from_a_record_opens_the_replay_form_with_its_choices(logged_in_page, make_user, topic_factory,
                                                                     produce, local_cluster, tmp_path):
    topic = topic_factory("form-replay", partitions=2)
    produce(topic, [(i % 2, None, b'{"n": %d}' % i, None) for i in range(20)])
    page = logged_in_page(make_user("form-replayer", "operator"))
    problems = _watch(page)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"/clusters/local/topics/{topic}/messages/1/4/")
    row = page.locator("#r-1-4")
    row.locator(".record-menu summary").click()
    row.get_by_role("link", name="Replay from here…").click()
    page.wait_for_url("**/replays/new/**")
    assert page.input_value("input[name=topic]") == topic
    assert page.locator("input[name=start_kind][value=offsets]").is_checked()
    assert page.locator("input[name=partitions][value='1']").is_checked()
    assert not page.locator("input[name=partitions][value='0']").is_checked()
    assert page.input_value("input[name=start_offset_1]") == "4"
    assert not page.locator("input[name=start_time]").is_visible()  # each choice's input shows when it is chosen
    page.check("input[name=end_kind][value=timestamp]")
    assert page.locator("input[name=end_time]").is_visible()
    assert page.locator("input[name=end_time]").get_attribute("placeholder") == "2026-11-29T02:41:00Z"
    page.check("input[name=start_kind][value=group]")
    assert not page.locator(".offsets-table").is_visible()  # no bound uses the table now
    assert page.locator("input[name=start_group]").get_attribute("list") == "replay-groups"
    page.screenshot(path=str(tmp_path / "replay-1400.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert problems == []
