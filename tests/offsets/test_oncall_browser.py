"""The pages on-call lives in, in chromium against the session broker: a stopped group reset from the wizard (all
topics by default, an unknown source group named with the closest names) whose status, total lag and groups-list
figure agree right after; a live group whose lag swings in a band reads OK and steady at every sweep; every page
fits a 390 px phone without sideways scroll or console errors."""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE = {"width": 390, "height": 844}
SHOTS = os.environ.get("ONCALL_SHOTS", "")  # a folder to keep the screenshots in, for a person to look at


def _committed(group):
    return cluster_admin("local").group_offsets([group])[group]


class Watched:
    """A logged-in page at a given size that records console errors and failed requests."""

    def __init__(self, browser, live_server, user, viewport, tmp_path, label):
        self.context = browser.new_context(base_url=live_server.url, viewport=viewport)
        self.page = self.context.new_page()
        self.page.set_default_timeout(20_000)
        self.problems: list[str] = []
        self.tmp_path, self.label, self.shots = tmp_path, label, 0
        # A refused form is answered 4xx by design (its message goes to its field), which chromium also logs.
        self.page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                     if m.type == "error" and not re.search(r"status of 4\d\d", m.text) else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("response", lambda r: self.problems.append(f"HTTP {r.status} {r.url}")
                     if r.status >= 500 else None)
        self.page.goto("/accounts/login/")
        self.page.fill("input[name=username]", user.username)
        self.page.fill("input[name=password]", "pw-" + user.username)
        self.page.click("button[type=submit]")
        self.page.wait_for_url("**/clusters/")

    def fits(self, name: str) -> None:
        """No sideways scroll at this width; a full-page screenshot kept."""
        self.page.wait_for_load_state("networkidle")
        width = self.page.evaluate("document.documentElement.scrollWidth")
        viewport = self.page.viewport_size["width"]
        self.shots += 1
        shot = self.tmp_path / f"{self.label}-{self.shots:02d}-{name}.png"
        self.page.screenshot(path=str(shot), full_page=True)
        if SHOTS:
            os.makedirs(SHOTS, exist_ok=True)
            shutil.copy(shot, SHOTS)
        assert width <= viewport, f"{name}: the page is {width} px wide at {viewport} px"

    def close(self):
        self.context.close()


@pytest.fixture
def watched(browser, live_server, tmp_path):
    opened = []

    def open_as(user, viewport, label):
        page = Watched(browser, live_server, user, viewport, tmp_path, label)
        opened.append(page)
        return page

    yield open_as
    for page in opened:
        page.close()


def _sweeps(count: int, *, every_s: float = 30.0):
    """`count` lag sweeps ending now, `every_s` apart (as beat would run them)."""
    from offsets.lag.sampler import lag_sample

    now = datetime.now(UTC)
    for i in range(count):
        lag_sample(cluster="local", now=now - timedelta(seconds=every_s * (count - 1 - i)))


def _list_row(page, group: str) -> str:
    from offsets.selectors import group_snapshot_refresh

    group_snapshot_refresh("local", wait_s=30)  # what the sweep's task does after a sweep
    page.goto(f"/clusters/local/groups/?q={group}")
    return page.locator(f"tr[data-group='{group}']").inner_text()


def test_a_stopped_group_reset_from_the_wizard_then_status_total_and_list_agree(watched, make_user, local_cluster,
                                                                                seeded, commit, kafka_node):
    group, topic = seeded["group"], seeded["topic"]
    source = f"{group}-source"
    commit(source, {(topic, 0): 4})
    _sweeps(3)
    oncall = make_user("oncall-phone", "operator")
    wide = watched(oncall, {"width": 1280, "height": 900}, "wide")
    page = wide.page

    row = _list_row(page, group)
    assert "STOP" in row and "\t15\t" in row
    page.goto(f"/clusters/local/groups/{group}/")
    status = page.locator("#lag-status")
    assert status.locator("#lag-verdict").inner_text() == "STOP"
    assert page.locator("#total-lag").inner_text() == "15"
    assert re.search(r"as of \d\d:\d\d:\d\d \((\d+ s|\d+ min) ago\)", status.inner_text())
    assert f"{topic}-0" in status.locator(".problems").inner_text()  # the reasons name the partitions
    assert "Not consuming" in status.locator("#lag-trend").inner_text()

    # The wizard: every topic by default, nothing to tick; only the chosen strategy's fields show.
    page.click("a:has-text('Reset offsets')")
    assert page.locator("select[name=scope]").input_value() == "all"
    assert page.locator("input[name=partition]:checked").count() == 0
    page.select_option("select[name=strategy]", "from-group")
    assert page.locator("fieldset[data-strategies=from-group]").is_visible()
    assert page.locator("fieldset[data-strategies=to-datetime]").is_hidden()
    typo = f"{group}-sorce"
    page.fill("input[name=source_group]", typo)
    page.click("button:has-text('Preview')")
    error = page.locator("#reset-form .field-error")
    error.wait_for()
    assert "does not exist" in error.inner_text() and source in error.inner_text()
    assert page.locator("input[name=source_group]").input_value() == typo  # kept, to correct
    page.select_option("select[name=strategy]", "to-latest")
    page.click("button:has-text('Preview')")
    preview = page.locator("#reset-preview")
    preview.get_by_text("Execute this plan").wait_for()
    assert preview.locator("#reset-totals tbody tr").first.inner_text().split() == [topic, "2", "0", "15", "15",
                                                                                     "→", "0"]
    preview.locator("input[name=reason]").fill("skip the backlog")
    preview.locator("input[name=confirm]").fill(group)
    page.click("button:has-text('Execute this plan')")
    flash = page.locator("#flash")
    flash.get_by_text(f"Offsets of {group} reset.").wait_for()
    outcome = AuditEvent.objects.get(target=f"group:{group}", outcome="success")
    assert flash.locator(f"a[href='/audit/{outcome.seq}/']").count() == 1
    assert flash.locator(f"a[href$='/revert/{outcome.seq}/']").inner_text().startswith("Undo")
    assert _committed(group) == {PartitionRef(topic, 0): 20, PartitionRef(topic, 1): 5}

    # Judged again at once: status, total, rows and the list all say the same.
    assert page.locator("#lag-verdict").inner_text() == "OK"
    assert page.locator("#total-lag").inner_text() == "0" and page.locator("#changed-since").count() == 0
    assert page.locator("#partitions tbody .status").count() == 0  # no stale STOP on a row
    assert "Caught up" in page.locator("#lag-trend").inner_text()
    row = _list_row(page, group)
    assert "OK" in row and "\t0\t" in row
    _sweeps(1, every_s=0)  # and after the next sweep, still
    page.goto(f"/clusters/local/groups/{group}/")
    assert (page.locator("#lag-verdict").inner_text(), page.locator("#total-lag").inner_text()) == ("OK", "0")
    wide.fits("group")
    page.goto(f"/clusters/local/groups/{group}/?tab=history")
    assert page.locator("#lag-chart .marker-tick a[href='/audit/%d/']" % outcome.seq).count() == 1
    wide.fits("group-history")
    page.goto("/audit/")
    wide.fits("audit")
    assert wide.problems == []

    # At a phone's width: the group's tabs, the wizard with a preview, the audit log with a row opened.
    phone = watched(oncall, PHONE, "phone")
    for tab in ("", "?tab=members", "?tab=history"):
        phone.page.goto(f"/clusters/local/groups/{group}/{tab}")
        phone.fits(f"group{tab.replace('?tab=', '-') or '-partitions'}")
    phone.page.goto(f"/clusters/local/groups/{group}/reset/")
    phone.page.select_option("select[name=strategy]", "to-earliest")
    phone.page.click("button:has-text('Preview')")
    phone.page.locator("#reset-preview").get_by_text("Execute this plan").wait_for()
    phone.fits("reset-preview")
    phone.page.goto("/audit/")
    action = phone.page.locator(f"details[data-seq='{outcome.seq}']")
    action.locator("summary").click()
    action.locator(".event-changes").wait_for()
    assert '"0": 20' in action.locator(".event-changes").inner_text()
    phone.fits("audit")
    # The cluster's health charts, with the reset as a tick on their time axis.
    from brokers.sampler import broker_metrics_sample_all
    from brokers.services import metrics_source_set
    from console.audit.actor import Actor

    metrics_source_set(actor=Actor(user=oncall, source="cli"), cluster="local", jmx=f"1=127.0.0.1:{kafka_node.jmx_port}",
                       reason="health charts")
    broker_metrics_sample_all()
    broker_metrics_sample_all()
    for shown in (phone, wide):
        shown.page.goto("/clusters/local/health/")
        ticks = shown.page.locator("#broker-charts .marker-tick")
        assert ticks.filter(has_text=f"#{outcome.seq} group.offsets.reset").count() >= 1  # with the source change
        assert shown.page.locator("#broker-charts line.marker").count() == 0  # no full-height lines any more
        shown.fits("health")
    assert phone.problems == [] and wide.problems == []


def test_a_live_group_whose_lag_swings_is_ok_and_steady_at_every_sweep(watched, make_user, local_cluster,
                                                                       topic_factory, produce, kafka_node):
    """A member of the group commits so that its lag swings between 3 and 6 while producers keep writing: the
    page never says OK beside "not catching up"."""
    from confluent_kafka import Consumer, TopicPartition

    from offsets.lag.sampler import lag_sample
    from offsets.models import GroupLagStatus

    topic = topic_factory("clicks", partitions=3)
    group = f"live-{uuid.uuid4().hex[:8]}"
    consumer = Consumer({"bootstrap.servers": kafka_node.bootstrap, "group.id": group, "enable.auto.commit": False,
                         "session.timeout.ms": 30000})
    consumer.subscribe([topic])
    deadline = time.monotonic() + 30
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(0.2)
    assert consumer.assignment(), "the consumer never joined its group"
    page = watched(make_user("oncall-live", "viewer"), PHONE, "live")
    ends = [0, 0, 0]
    swings = [3, 6, 4, 6, 3, 5, 6, 3]
    start = datetime.now(UTC) - timedelta(seconds=30 * len(swings))
    seen = []
    try:
        for i, total in enumerate(swings):
            produce(topic, [(p, None, b"click", None) for p in range(3) for _ in range(10)])
            ends = [e + 10 for e in ends]
            # The total over two partitions, the third caught up, a different one each time (as a live group's
            # lag moves around its partitions).
            lags = [0, 0, 0]
            lags[(i + 1) % 3], lags[(i + 2) % 3] = (total + 1) // 2, total // 2
            consumer.commit(offsets=[TopicPartition(topic, p, ends[p] - lags[p]) for p in range(3)],
                            asynchronous=False)
            consumer.poll(0)
            lag_sample(cluster="local", now=start + timedelta(seconds=30 * i))
            if i < 2:
                continue
            row = GroupLagStatus.objects.get(cluster="local", group=group)
            assert row.totals[-1] == total
            page.page.goto(f"/clusters/local/groups/{group}/")
            verdict = page.page.locator("#lag-verdict").inner_text()
            trend = page.page.locator("#lag-trend").inner_text()
            seen.append((verdict, trend))
            assert verdict == "OK", trend
            assert "not catching up" not in trend.lower() and "falling behind" not in trend.lower()
            assert page.page.locator("#total-lag").inner_text() == str(total)
        assert "Steady: the lag stays between 3 and 6" in seen[-1][1]
        page.fits("live-group")
        assert page.problems == []
    finally:
        consumer.close()
