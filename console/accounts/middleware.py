"""Re-checks single sign-on sessions against the provider, so a role changed or taken away there reaches the
console within CONSOLE_SSO_RECHECK_S instead of lasting as long as the session (a working day)."""

from __future__ import annotations

import time

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import redirect
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect

from console.accounts.sso import MSG_SESSION_ENDED, SESSION_CHECKED_AT, ConsoleOIDCBackend

# The sign-in and sign-out paths themselves are never re-checked: they replace or end the session anyway.
_EXEMPT_PREFIXES = ("/accounts/oidc/", "/accounts/logout/", "/accounts/login/")


class SsoRecheckMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        # Without a session cookie there is nothing to re-check, and reading the session would add Vary: Cookie.
        has_session = hasattr(request, "session") and settings.SESSION_COOKIE_NAME in request.COOKIES
        checked_at = request.session.get(SESSION_CHECKED_AT) if has_session else None
        if (checked_at is not None and settings.SSO_ENABLED and not request.path.startswith(_EXEMPT_PREFIXES)
                and time.time() >= checked_at + settings.CONSOLE_SSO_RECHECK_S and request.user.is_authenticated):
            ended = ConsoleOIDCBackend().recheck(request)
            if ended is not None:
                return self._end(request, MSG_SESSION_ENDED.format(detail=ended))
        return self.get_response(request)

    @staticmethod
    def _end(request, message: str):
        logout(request)
        messages.error(request, message)
        login = reverse(settings.LOGIN_URL)
        if request.headers.get("HX-Request") == "true":
            return HttpResponseClientRedirect(login)
        if request.method == "GET":
            return redirect_to_login(request.get_full_path(), login)
        return redirect(login)
