"""The API's OpenAPI 3.1 document validates (openapi-spec-validator) and names every operation's security and
problems; its explorer (Swagger UI from the console's own static files) renders in Debian's chromium under the
console's CSP (scripts only from 'self') without a CSP error, served as `make run` serves it."""

from __future__ import annotations

import json

import pytest
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db


def test_the_document_validates_and_every_operation_asks_for_a_token(client):
    answer = client.get("/api/v1/openapi.json")
    assert answer.status_code == 200  # a document, not data: no token needed to read it
    duplicated = []

    def no_duplicate_keys(pairs):  # Python's JSON reader keeps the last of a repeated key; Swagger UI refuses it
        keys = [key for key, _ in pairs]
        duplicated.extend(key for key in set(keys) if keys.count(key) > 1)
        return dict(pairs)

    document = json.loads(answer.content, object_pairs_hook=no_duplicate_keys)
    assert duplicated == []
    validate(document)
    assert document["openapi"] == "3.1.0"
    assert document["components"]["securitySchemes"] == {"ApiToken": {"type": "http", "scheme": "bearer"}}
    operations = [op for path in document["paths"].values() for op in path.values()]
    assert len(operations) >= 40
    assert all(op["security"] == [{"ApiToken": []}] for op in operations)
    assert all("403" in op["responses"] and "401" in op["responses"] for op in operations)
    problem = document["components"]["schemas"]["Problem"]
    assert set(problem["required"]) >= {"type", "title", "status", "detail"}


def test_the_explorer_is_a_page_for_people_logged_in(client, client_for, viewer):
    assert client.get("/api/v1/docs").status_code == 302
    page = client_for(viewer).get("/api/v1/docs")
    assert page.status_code == 200 and "swagger-ui-bundle.js" in page.content.decode()
    assert "cdn" not in page.content.decode().lower()


@pytest.mark.kafka
@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_explorer_renders_under_the_csp(browser, run_style_web, viewer):
    context = browser.new_context(base_url=run_style_web.url, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto("/accounts/login/")
    page.fill("input[name=username]", viewer.username)
    page.fill("input[name=password]", "pw-" + viewer.username)
    page.click("button[type=submit]")
    page.wait_for_url("**/clusters/")
    answer = page.goto("/api/v1/docs")
    csp = answer.headers["content-security-policy"]
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    try:
        page.wait_for_selector(".swagger-ui .opblock", state="attached")
    except Exception:
        spec = page.request.get("/api/v1/openapi.json")
        raise AssertionError(f"the explorer did not render: {problems}; {page.inner_text('#swagger-ui')[:500]}") from None
    assert page.locator(".swagger-ui .opblock").count() >= 40
    assert page.locator(".swagger-ui .info .title").inner_text().startswith("Kafka console API")
    page.locator(".swagger-ui .opblock-summary", has_text="/api/v1/clusters/{cluster}/topics").first.click()
    page.wait_for_selector(".swagger-ui .opblock.is-open")
    assert [p for p in problems if "Content Security Policy" in p or "page error" in p or p.startswith("error")] == []
    context.close()
