"""The message browser in Debian's chromium against the real broker: a screen full of one-line records newest first
across partitions (what a raw consumer calls the newest), a row that opens into a JSON tree and closes, the live tail
showing a record written after the page opened within 3 s and pausing while the person reads, the record link,
scrolling for more (asking the next offsets only), no sideways scroll on a phone, no console errors."""

from __future__ import annotations

import json
import re
import time
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.records.test_browse import _raw_records

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def orders(topic_factory, kafka_node, local_cluster):
    """A JSON orders topic on 3 partitions, 600 records, one a second until a second ago (distinct timestamps, so
    "newest" has one answer)."""
    from confluent_kafka import Producer

    topic = topic_factory("browse-orders", partitions=3)
    producer = Producer({"bootstrap.servers": kafka_node.bootstrap, "linger.ms": 5})
    now_ms = int(time.time() * 1000)
    refused = []
    for i in range(600):
        value = {"id": f"ord-{10_000 + i}", "customer": {"name": f"Customer {i % 37}", "country": "NO"},
                 "items": [{"sku": f"A-{i % 11}", "qty": 1 + i % 3}], "total": round(12.5 + i, 2), "paid": i % 2 == 0}
        producer.produce(topic, key=f"ord-{10_000 + i}".encode(), value=json.dumps(value).encode(), partition=i % 3,
                         headers=[("source", b"web")], timestamp=now_ms - (600 - i) * 1000,
                         on_delivery=lambda error, _: error is not None and refused.append(error))
    assert producer.flush(30) == 0 and not refused, refused[:5]
    return topic


def _watch(page) -> list[str]:
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    return problems


def _shown(page) -> list[tuple[int, int]]:
    ids = page.eval_on_selector_all("#record-rows > .record[id]", "rows => rows.map(r => r.id)")
    return [(int(p), int(o)) for p, o in (re.fullmatch(r"r-(\d+)-(\d+)", i).groups() for i in ids)]


def _rows_in_view(page) -> int:
    return page.evaluate("""() => [...document.querySelectorAll('#record-rows > .record')].filter(r => {
        const box = r.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= window.innerHeight; }).length""")


def test_a_screen_of_records_newest_first_that_open_into_a_tree(logged_in_page, make_user, orders, kafka_node,
                                                                tmp_path):
    page = logged_in_page(make_user("browser-viewer", "viewer"))
    problems = _watch(page)
    page.set_viewport_size({"width": 1400, "height": 900})
    url = f"/clusters/local/topics/{orders}/messages/"
    page.goto(url)
    page.locator("#record-rows > .record").first.wait_for()
    in_view = _rows_in_view(page)
    assert in_view >= 15, in_view
    page.screenshot(path=str(tmp_path / "browse-1400.png"))

    # Newest first across partitions: the page's 50 rows are a raw consumer's 50 newest, in the same order.
    raw = sorted(_raw_records(kafka_node.bootstrap, orders), reverse=True)
    assert _shown(page) == [(p, o) for _, p, o in raw[:50]]

    # A row opens in place into a JSON tree with its parts named, a subtree closes, the row closes.
    row = page.locator("#record-rows > .record").nth(2)
    row.locator("summary.record-line").click()
    tree = row.locator(".json-tree").first
    tree.wait_for()
    assert '"customer": {' in tree.inner_text() and '"country": "NO"' in tree.inner_text()
    assert "json" in row.locator(".record-part .tag").first.inner_text()
    customer = tree.locator("details details").first
    assert customer.locator(".jt-leaf").first.is_visible()
    customer.locator("summary").first.click()
    assert not customer.locator(".jt-leaf").first.is_visible()
    row.locator(".part-tools [data-raw-toggle]").first.click()
    assert row.locator("pre.payload-text").first.is_visible() and not tree.is_visible()
    page.screenshot(path=str(tmp_path / "browse-open.png"))
    row.locator("summary.record-line").click()
    assert not row.locator(".record-body").is_visible()

    # The row menu: the actions in one place, closed by a click elsewhere.
    menu = row.locator(".record-menu")
    menu.locator("summary").click()
    assert menu.get_by_role("link", name="Replay from here…").is_visible()
    page.locator("h1").click()
    assert not menu.get_by_role("link", name="Replay from here…").is_visible()

    # Scrolling loads the next page, asking for the offsets below the first page's cursor only.
    cursor = parse_qs(urlsplit(page.locator(".load-more a").get_attribute("href")).query)["after"][0]
    with page.expect_request(lambda r: "after=" in r.url) as asked:
        page.locator(".load-more").scroll_into_view_if_needed()
    assert parse_qs(urlsplit(asked.value.url).query)["after"] == [cursor]
    page.locator("#record-rows > .record").nth(99).wait_for()
    assert _shown(page)[:100] == [(p, o) for _, p, o in raw[:100]]

    heights = {}
    for limit in (50, 500):
        page.goto(f"{url}?limit={limit}")
        page.locator("#record-rows > .record").first.wait_for()
        heights[limit] = page.evaluate("document.documentElement.scrollHeight")
    # A search's matches are the same one-line rows.
    page.goto(f"/clusters/local/messages/{orders}/search/?run=1&value=ord-&max_matches=135")
    page.locator(".search-ending").wait_for()
    assert page.locator("#matches > .record").count() == 135
    search_height = page.evaluate("document.documentElement.scrollHeight")
    print(f"\nrecords in a 1400x900 screen: {in_view}; page height for 50: {heights[50]} px, 500: {heights[500]} px;"
          f" a search with 135 matches: {search_height} px")
    assert heights[500] < 500 * 40 and search_height < 135 * 40 + 1000

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(url)
    page.locator("#record-rows > .record").first.wait_for()
    page.locator("#record-rows > .record").first.locator("summary.record-line").click()
    page.locator(".json-tree").first.wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(tmp_path / "browse-390.png"), full_page=False)
    page.emulate_media(color_scheme="dark")
    page.screenshot(path=str(tmp_path / "browse-390-dark.png"), full_page=False)
    assert problems == []


def test_the_live_tail_follows_and_pauses_while_reading(logged_in_page, make_user, orders, produce):
    page = logged_in_page(make_user("tail-viewer", "viewer"))
    problems = _watch(page)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"/clusters/local/topics/{orders}/messages/")
    page.locator("#record-rows > .record").first.wait_for()
    assert "Live" in page.locator("[data-tail-state]").inner_text()

    produce(orders, [(1, b"late-1", b'{"late": 1}', None)])
    written = time.monotonic()
    page.locator("#r-1-200").wait_for(timeout=3000)
    assert time.monotonic() - written < 3.0
    assert _shown(page)[0] == (1, 200)

    # Scrolled down to read: paused; the record written meanwhile shows once the person is back at the top.
    page.evaluate("window.scrollTo(0, 1500)")
    page.locator("[data-tail-state]", has_text="Paused").wait_for()
    produce(orders, [(2, b"late-2", b'{"late": 2}', None)])
    time.sleep(2.5)
    assert page.locator("#r-2-200").count() == 0
    page.evaluate("window.scrollTo(0, 0)")
    page.locator("#r-2-200").wait_for(timeout=3000)

    # An open record pauses it too; so does the button.
    page.locator("#r-2-200 summary.record-line").click()
    assert "open" in page.locator("[data-tail-state]").inner_text()
    page.locator("#r-2-200 summary.record-line").click()
    page.locator("[data-tail-toggle]").click()
    assert page.locator("[data-tail-state]").inner_text() == "Paused."
    assert problems == []


def test_a_record_link_opens_it_and_filters_stay_in_the_url(logged_in_page, make_user, orders):
    page = logged_in_page(make_user("link-viewer", "viewer"))
    problems = _watch(page)
    page.goto(f"/clusters/local/topics/{orders}/messages/")
    first = page.locator("#record-rows > .record").nth(4)
    anchor = first.get_attribute("id")
    _, partition, offset = anchor.split("-")
    first.locator(".record-menu summary").click()
    first.get_by_role("link", name="Open this record's link").click()
    page.wait_for_url(f"**/messages/{partition}/{offset}/")
    opened = page.locator(f"#{anchor} .record-row[open]")
    opened.locator(".json-tree").wait_for()
    assert f'"id": "ord-{10_000 + int(offset) * 3 + int(partition)}"' in opened.inner_text()

    page.select_option("select[name=start]", "oldest")
    assert not page.locator("input[name=since]").is_visible()
    page.select_option("select[name=partition]", "2")
    page.fill("input[name=key]", "ord-1001")
    page.click("#browse-form button[type=submit]")
    page.wait_for_url("**key=ord-1001**")
    assert parse_qs(urlsplit(page.url).query) == {"start": ["oldest"], "partition": ["2"], "key": ["ord-1001"]}
    page.locator("#r-2-3").wait_for()  # the URL changes as the request leaves; the rows when its answer is in
    assert _shown(page) == [(2, 3), (2, 4), (2, 5)]  # ord-10011, ord-10014 and ord-10017 are on partition 2
    page.select_option("select[name=start]", "time")
    assert page.locator("input[name=since]").get_attribute("placeholder") == "2026-11-29T02:41:00Z"

    page.locator(".saved-filters summary").click()
    page.fill(".save-filter input[name=name]", "tens on 2")
    page.click(".save-filter button")
    page.locator(".saved-filters .count").wait_for()
    page.goto(f"/clusters/local/topics/{orders}/messages/")
    page.locator(".saved-filters summary").click()
    page.get_by_role("link", name="tens on 2").click()
    page.wait_for_url("**key=ord-1001**")
    assert _shown(page) == [(2, 3), (2, 4), (2, 5)]
    assert problems == []
