"""An on-call engineer in the browser: preview a reset, execute it, then revert it from its audit event."""

import pytest

from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.kafka.types import PartitionRef

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
