"""An on-call engineer in the browser: preview a reset, execute it, then revert it from its audit event."""

import pytest

from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _committed(group):
    return cluster_admin("local").group_offsets([group])[group]


def test_preview_execute_revert_in_the_browser(logged_in_page, make_user, local_cluster, seeded, tmp_path):
    group, topic = seeded["group"], seeded["topic"]
    page = logged_in_page(make_user("oncall", "operator"))

    page.goto(f"/clusters/local/groups/{group}/")
    page.click("a:has-text('Reset offsets')")
    page.select_option("select[name=scope]", "all")
    page.select_option("select[name=strategy]", "to-earliest")
    page.click("button:has-text('Preview')")
    preview = page.locator("#reset-preview")
    preview.get_by_text("Execute this plan").wait_for()
    assert "-5" in preview.inner_text()  # partition 0: 8 -> 3
    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}

    preview.locator("input[name=reason]").fill("re-read after the bad deploy")
    preview.locator("input[name=confirm]").fill(group)
    page.click("button:has-text('Execute this plan')")
    page.get_by_text(f"Offsets of {group} reset.").wait_for()
    assert _committed(group) == {PartitionRef(topic, 0): 3, PartitionRef(topic, 1): 0}

    outcome = AuditEvent.objects.get(outcome="success", target=f"group:{group}")
    page.goto(f"/audit/{outcome.seq}/")
    page.click("a:has-text('Revert this reset')")
    assert "8" in page.locator("table.plan").inner_text()
    page.fill("input[name=reason]", "undo")
    page.fill("input[name=confirm]", group)
    page.click("button:has-text('Execute the revert')")
    page.get_by_text(f"back to those before audit event #{outcome.seq}").wait_for()
    page.screenshot(path=str(tmp_path / "group-after-revert.png"), full_page=True)

    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}
    resets = AuditEvent.objects.filter(outcome="success", action="group.offsets.reset").order_by("seq")
    assert [(e.actor_name, e.params["revert_of"]) for e in resets] == [("oncall", None), ("oncall", outcome.seq)]


def test_lag_chart_ranges_swap_in_place_and_the_list_shows_status(logged_in_page, make_user, local_cluster, seeded):
    from datetime import UTC, datetime, timedelta

    from offsets.lag.sampler import lag_sample
    from offsets.models import LagSample
    from offsets.selectors import group_snapshot_refresh

    group, topic = seeded["group"], seeded["topic"]
    now = datetime.now(UTC)
    for minutes in (2, 1):  # two earlier sweeps that saw the same stuck offsets; the third is real
        lag_sample(cluster="local", now=now - timedelta(minutes=minutes))
    lag_sample(cluster="local", now=now)
    assert LagSample.objects.filter(group=group, step=0).count() == 3
    assert group_snapshot_refresh("local", wait_s=30) is not None  # what the sweep's task does after a sweep
    page = logged_in_page(make_user("watcher", "viewer"))

    page.goto(f"/clusters/local/groups/?q={group}")
    badge = page.locator(f"tr[data-group='{group}'] .status")
    assert badge.inner_text() == "STOP" and "no members" in badge.get_attribute("title")

    page.goto(f"/clusters/local/groups/{group}/?tab=history")
    chart = page.locator("#lag-chart")
    assert chart.locator(f"polyline[data-series='{topic}']").count() == 1
    assert "every sample" in chart.inner_text()
    chart.locator("a:has-text('24h')").click()
    page.get_by_text("5-minute buckets").wait_for()
    assert page.url.endswith(f"/groups/{group}/?tab=history")  # swapped in place, the page did not navigate
    assert page.locator("#lag-chart a.current").inner_text() == "24h"
