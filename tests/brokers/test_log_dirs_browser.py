"""Cordoning in Debian's chromium: the broker page loads its log directories, the broker's own refusal of a path
that is not one of them shows at the field, and a directory's row previews and cordons it, then uncordons it
again."""

from __future__ import annotations

import pytest

from console.clusters.models import Cluster

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_brokers_refusal_at_the_field_and_a_cordon_from_a_row(logged_in_page, admin, jbod_kafka):
    Cluster.objects.update_or_create(name="jbod", defaults={"bootstrap_servers": jbod_kafka.bootstrap})
    second = str(jbod_kafka.log_dirs[1])
    page = logged_in_page(admin)
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto("/clusters/jbod/health/brokers/1/")
    field = page.locator("#cordon-form input[name=log_dirs]")
    field.wait_for()  # the section came in after the page
    assert page.locator("tr.log-dir").count() == 2
    field.fill("/not/a/log/dir")
    page.locator("#cordon-form button[type=submit]").click()
    error = page.locator("#cordon-form .field-error")
    error.wait_for()
    assert "must be present in log.dirs" in error.inner_text() and field.input_value() == "/not/a/log/dir"

    page.locator(f'tr.log-dir[data-path="{second}"] button').click()
    preview = page.locator("#cordon-preview.preview")
    preview.wait_for()
    assert "New replicas will not be placed" in preview.inner_text() and second in preview.inner_text()
    preview.locator("input[name=reason]").fill("disk swap")
    preview.locator("button[type=submit]").click()
    page.locator(f'tr.log-dir[data-path="{second}"][data-cordoned="true"]').wait_for()
    page.locator(f'tr.log-dir[data-path="{second}"] button').click()
    page.locator("#cordon-preview.preview button[type=submit]").click()
    page.locator(f'tr.log-dir[data-path="{second}"][data-cordoned="false"]').wait_for()
    assert problems == []
