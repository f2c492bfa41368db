"""Telling people of a change request: the protection's webhook channel (one of CONSOLE_ALERT_WEBHOOKS, as alert
rules name them) gets a message when a request is made and when someone breaks the glass. Sent at once, within
the channel's few-second bound, so that the message goes out with the event; a channel that fails is noted on the
request and never undoes or blocks the change."""

from __future__ import annotations

import logging

from django.conf import settings
from django.urls import reverse

from alerts.channels import DeliveryFailed, webhook_send
from changes.models import ChangeRequest, Protection

REQUESTED, BREAK_GLASS = "requested", "break-glass"
logger = logging.getLogger(__name__)

_TEXT = {
    REQUESTED: "Change request #{id} on {cluster}: {who} asks for {action} of {target} ({reason}). Needs {needed} "
               "approval(s) by {expires}: {url}",
    BREAK_GLASS: ":rotating_light: BREAK-GLASS on {cluster}: {who} ran change request #{id} ({action} of {target}) "
                 "without approval ({reason}). Status: {status}. {url}",
}


def change_message(change: ChangeRequest, event: str, *, who: str, reason: str) -> dict:
    """Slack-compatible JSON: "text" for people, "change_request" for programs."""
    url = settings.CONSOLE_BASE_URL.rstrip("/") + reverse("changes:detail", args=[change.pk])
    text = _TEXT[event].format(id=change.pk, cluster=change.cluster, who=who, action=change.action,
                               target=change.target, reason=reason, needed=change.approvals_required,
                               expires=f"{change.expires_at:%Y-%m-%d %H:%M} UTC", status=change.status, url=url)
    return {"text": text, "event": event, "change_request": {
        "id": change.pk, "cluster": change.cluster, "action": change.action, "target": change.target,
        "status": change.status, "requested_by": change.requested_by_name, "reason": change.reason,
        "break_glass": change.break_glass, "url": url}}


def change_notify(change: ChangeRequest, event: str, *, who: str, reason: str) -> None:
    protection = Protection.objects.filter(cluster=change.cluster).first()
    if protection is None or not protection.webhook:
        return
    try:
        webhook_send(protection.webhook, change_message(change, event, who=who, reason=reason))
    except DeliveryFailed as exc:
        logger.warning("change request #%s: %s", change.pk, exc)
        change.notify_error = str(exc)
        change.save(update_fields=["notify_error"])
