"""What a page or a command does with a change on a protected target: it asks for it (a change request) instead
of running the service, and says where the request is."""

from __future__ import annotations

import json

from django.contrib import messages
from django.urls import reverse
from django.utils.html import format_html

from changes.actions import action_named
from changes.guard import is_protected
from changes.models import ChangeRequest
from changes.serializers import change_json
from changes.services import change_request_create
from console.audit.actor import Actor
from console.http import HtmxHttpRequest, redirect_after_change

MSG_PROPOSED = ("{target} is protected: change request #{id} waits for {needed} approval(s) by another person "
                "(until {expires:%Y-%m-%d %H:%M} UTC). Nothing has changed yet.")


def propose_if_protected(*, actor: Actor, action: str, cluster: str, kwargs: dict, reason: str
                         ) -> ChangeRequest | None:
    """The request made for this change when its target is protected; None when the caller should run it."""
    if not is_protected(cluster, action_named(action).target(kwargs)):
        return None
    return change_request_create(actor=actor, action=action, cluster=cluster, kwargs=kwargs, reason=reason)


def proposed_text(change: ChangeRequest) -> str:
    return MSG_PROPOSED.format(target=change.target, id=change.pk, needed=change.approvals_required,
                               expires=change.expires_at)


def proposed_output(command, options: dict, change: ChangeRequest) -> None:
    """What a management command prints when it asked for a request instead of changing: the request's JSON with
    --format json, else where it waits."""
    if options.get("format") == "json":
        command.stdout.write(json.dumps(change_json(change), indent=2))
    else:
        command.stdout.write(proposed_text(change) + f" Another person runs: manage.py changes approve {change.pk}")


def proposed_response(request: HtmxHttpRequest, change: ChangeRequest):
    """The flash that names the request, and its page."""
    url = reverse("changes:detail", args=[change.pk])
    messages.success(request, format_html('{} <a href="{}">See change request #{}</a>', proposed_text(change), url,
                                          change.pk))
    return redirect_after_change(request, url)
