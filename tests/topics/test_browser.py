"""A platform admin in the browser: create a topic, preview and apply a config change, delete it."""

import pytest

from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import TOPIC

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_create_edit_config_delete_in_the_browser(logged_in_page, make_user, local_cluster, tmp_path):
    page = logged_in_page(make_user("browser-admin", "admin"))
    name = "browser-orders"

    page.goto("/clusters/local/topics/new/")
    page.fill("input[name=name]", name)
    page.fill("input[name=partitions]", "2")
    page.fill("textarea[name=configs]", "retention.ms=3600000")
    page.fill("input[name=reason]", "browser test")
    page.click("button:has-text('Create')")
    page.wait_for_url(f"**/topics/{name}/")
    # The topic page is in tabs: partitions and configuration each have their own.
    page.goto(f"/clusters/local/topics/{name}/?tab=partitions")
    assert page.locator("#partitions tbody tr").count() == 2
    page.goto(f"/clusters/local/topics/{name}/?tab=configuration")
    assert "topic override" in page.locator("table.configs").inner_text()

    page.fill("textarea[name=set_values]", "retention.ms=86400000")
    page.locator("form:has(textarea[name=set_values]) input[name=reason]").fill("longer retention")
    page.click("button:has-text('Preview')")
    preview = page.locator("#config-preview")
    preview.get_by_text("86400000").wait_for()
    assert "3600000" in preview.inner_text()
    assert cluster_admin("local").describe_configs(TOPIC, [name])[name]["retention.ms"].value == "3600000"
    page.click("button:has-text('Apply these changes')")
    page.get_by_text(f"Configs of {name} changed.").wait_for()
    page.goto(f"/clusters/local/topics/{name}/?tab=configuration")
    page.screenshot(path=str(tmp_path / "topic-after-edit.png"), full_page=True)
    retention_row = page.locator("table.configs tr", has=page.locator("code", has_text="retention.ms")).first
    # In human units, the raw value on hover.
    assert "1 day" in retention_row.inner_text() and "topic override" in retention_row.inner_text()
    assert retention_row.locator("span[title='86400000']").count() == 1

    page.locator("form:has(input[name=confirm]) input[name=confirm]").fill(name)
    page.locator("form:has(input[name=confirm]) input[name=reason]").fill("done")
    page.click(f"button:has-text('Delete {name}')")
    page.wait_for_url("**/clusters/local/topics/")

    assert name not in {t.name for t in cluster_admin("local").list_topics()}
    actions = list(AuditEvent.objects.filter(outcome="success", target=f"topic:{name}")
                   .order_by("seq").values_list("action", "actor_name", "source"))
    assert actions == [("topic.create", "browser-admin", "web"), ("topic.config.alter", "browser-admin", "web"),
                       ("topic.delete", "browser-admin", "web")]
