"""Log in (local accounts and/or the company's OpenID Connect provider) and log out of both."""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import LoginView
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

MSG_LOCAL_OFF = "Local accounts are switched off here: log in with {sso}."


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
