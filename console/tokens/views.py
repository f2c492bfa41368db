"""The API tokens page: a person's tokens (an admin's: everyone's) with their last use, a form to make one (its
secret shown once, on the answer), and revocation."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.accounts.decorators import role_required
from console.accounts.roles import Role, user_role
from console.audit.actor import Actor
from console.clusters.models import Cluster
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from console.tokens.forms import TokenCreateForm
from console.tokens.models import ApiToken
from console.tokens.selectors import tokens_visible_to
from console.tokens.services import token_create, token_revoke


def _context(request, form: TokenCreateForm, **extra) -> dict:
    return {"tokens": tokens_visible_to(request.user), "form": form, "admin": user_role(request.user) == Role.ADMIN,
            **extra}


def _form(request, data=None) -> TokenCreateForm:
    return TokenCreateForm(data, role=user_role(request.user),
                           clusters=list(Cluster.objects.order_by("name").values_list("name", flat=True)))


@require_GET
@role_required(Role.VIEWER)
def token_list(request: HtmxHttpRequest):
    return render(request, "tokens/list.html", _context(request, _form(request)))


@require_POST
@role_required(Role.VIEWER)
def token_new(request: HtmxHttpRequest):
    """Makes the token and answers with its secret, the one time it is shown (never stored, never redirected)."""
    data = valid_data(_form(request, request.POST))
    token, secret = token_create(
        actor=Actor.from_request(request), name=data["name"], kind=data["kind"], role=Role(data["role"]),
        expires_days=data["expires_days"], clusters=data["clusters"], read_only=data["read_only"],
        mcp_execute=data["mcp_execute"], reason=data["reason"])
    context = _context(request, _form(request), created=token, secret=secret)
    response = render(request, "tokens/list.html#tokens" if request.htmx else "tokens/list.html", context)
    response["Cache-Control"] = "no-store"  # the secret is in this answer
    return response


@require_POST
@role_required(Role.VIEWER)
def token_revoke_view(request: HtmxHttpRequest, token_id: int):
    token: ApiToken = token_revoke(actor=Actor.from_request(request), token_id=token_id,
                                   reason=request.POST.get("reason", ""))
    messages.success(request, f"Token '{token.name}' ({token.prefix}…) revoked: calls with it now get 401.")
    return redirect_after_change(request, reverse("tokens:list"))
