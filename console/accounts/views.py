"""Log in (local accounts and/or the company's OpenID Connect provider), log out of both, and roles (admins)."""

from __future__ import annotations

import logging
from urllib.parse import urlencode

import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import LoginView
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView

from console.accounts.decorators import role_required
from console.accounts.forms import ROLE_CHOICES, RoleSetForm
from console.accounts.roles import Role
from console.accounts.selectors import user_roles_list
from console.accounts.services import user_role_set
from console.accounts.sso import provider_failure
from console.audit.actor import Actor
from console.http import HtmxHttpRequest, redirect_after_change, valid_data

MSG_LOCAL_OFF = "Local accounts are switched off here: log in with {sso}."
MSG_PROVIDER_DOWN = ("{sso} could not complete your sign-in ({detail}), so you are not logged in. Your account is "
                     "fine: try again in a moment.")

log = logging.getLogger(__name__)


class ConsoleLoginView(LoginView):
    """Django's login, told whether SSO and local accounts are on; refuses a local login when they are off."""

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "sso_enabled": settings.SSO_ENABLED,
                "sso_name": settings.CONSOLE_SSO_NAME, "local_login": settings.CONSOLE_LOCAL_LOGIN}

    def post(self, request, *args, **kwargs):
        if not settings.CONSOLE_LOCAL_LOGIN:
            context = self.get_context_data(form=self.get_form_class()(request))
            context["refusal"] = MSG_LOCAL_OFF.format(sso=settings.CONSOLE_SSO_NAME)
            return render(request, self.template_name, context, status=403)
        return super().post(request, *args, **kwargs)


login_view = login_not_required(ConsoleLoginView.as_view())


class ConsoleOIDCCallbackView(OIDCAuthenticationCallbackView):
    """mozilla-django-oidc's callback, with a provider that is down or erring (token, keys or userinfo call)
    turned into a page that says so and offers to try again, instead of a server error."""

    def get(self, request):
        try:
            return super().get(request)
        except requests.RequestException as exc:
            detail = provider_failure(exc)
            log.warning("SSO callback: the provider failed: %s (%s)", detail, type(exc).__name__)
            return render(request, "accounts/sso_unavailable.html", {
                "message": MSG_PROVIDER_DOWN.format(sso=settings.CONSOLE_SSO_NAME, detail=detail),
                "sso_name": settings.CONSOLE_SSO_NAME, "local_login": settings.CONSOLE_LOCAL_LOGIN})


oidc_callback_view = login_not_required(ConsoleOIDCCallbackView.as_view())


@require_POST
@login_not_required
def logout_view(request):
    """Ends the console session; after an SSO login, the provider's session too (RP-initiated logout)."""
    id_token = request.session.get("oidc_id_token")
    logout(request)
    if id_token and settings.OIDC_OP_LOGOUT_ENDPOINT:
        back = request.build_absolute_uri(reverse("login"))
        query = urlencode({"id_token_hint": id_token, "post_logout_redirect_uri": back,
                           "client_id": settings.OIDC_RP_CLIENT_ID})
        return redirect(f"{settings.OIDC_OP_LOGOUT_ENDPOINT}?{query}")
    return redirect(settings.LOGOUT_REDIRECT_URL)


@require_GET
@role_required(Role.ADMIN)
def user_list(request: HtmxHttpRequest):
    """Every account and its role, each with a form to change it (admins only: the list itself says who to phish)."""
    context = {"users": user_roles_list(), "role_choices": ROLE_CHOICES}
    return render(request, "accounts/users.html#user-table" if request.htmx else "accounts/users.html", context)


@require_POST
@role_required(Role.ADMIN)
def user_role_set_view(request: HtmxHttpRequest):
    data = valid_data(RoleSetForm(request.POST))
    after = user_role_set(actor=Actor.from_request(request), username=data["username"], role=data["role"],
                          reason=data["reason"])
    messages.success(request, f"{data['username']} now holds {after['role'] or 'no role'}.")
    return redirect_after_change(request, reverse("user-list"))
