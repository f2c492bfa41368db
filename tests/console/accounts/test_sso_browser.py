"""The whole single sign-on, in Debian's chromium: the console's login page, the provider's own sign-in page,
back to the page first asked for with the mapped role, and out of both on logout."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_login_through_the_providers_page_and_logout(sso, browser, live_server):
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto("/audit/")
        assert "/accounts/login/" in page.url
        page.click("#sso-login")
        page.wait_for_url(f"{sso.issuer}/authorize**")
        page.fill("input[name=username]", "dana")
        page.fill("textarea[name=claims]", json.dumps({"preferred_username": "dana", "email": "dana@corp.example",
                                                       "groups": ["kafka-oncall"]}))
        page.click("button[type=submit]")
        page.wait_for_url("**/audit/")
        account = page.locator("header summary[aria-label^='Account']")
        assert account.get_attribute("aria-label") == "Account: sso:dana · operator"
        assert account.locator(".role-badge").inner_text() == "operator"

        account.click()  # the account menu holds the logout
        page.click("header button:has-text('Log out')")
        page.wait_for_url("**/accounts/login/**")
        assert page.is_visible("#sso-login")
        page.goto("/audit/")
        assert "/accounts/login/" in page.url  # the console session is gone
    finally:
        context.close()
