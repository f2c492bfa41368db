"""Where alerts go: webhooks named in the environment (their URLs carry tokens, so they are secrets) and email
through Django's mail settings."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from django.conf import settings
from django.core.mail import send_mail

from console.errors import ConsoleError

WEBHOOK_TIMEOUT_S = 5.0
MSG_UNKNOWN_WEBHOOK = "No webhook named '{name}': CONSOLE_ALERT_WEBHOOKS names {known}."


def webhook_channels() -> dict[str, str]:
    """CONSOLE_ALERT_WEBHOOKS, "name=url,name=url", as a dict."""
    channels = {}
    for item in settings.ALERT_WEBHOOKS.split(","):
        name, sep, url = item.strip().partition("=")
        if sep and name.strip() and url.strip():
            channels[name.strip()] = url.strip()
    return channels


def webhook_check(name: str) -> None:
    known = webhook_channels()
    if name and name not in known:
        raise ConsoleError(MSG_UNKNOWN_WEBHOOK.format(name=name, known=", ".join(sorted(known)) or "none"))


class DeliveryFailed(Exception):
    pass


def webhook_send(name: str, payload: dict) -> None:
    """POSTs Slack-compatible JSON ("text" is what Slack shows; the rest is for other receivers)."""
    url = webhook_channels().get(name)
    if url is None:
        raise DeliveryFailed(f"webhook '{name}' is no longer configured")
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=WEBHOOK_TIMEOUT_S) as response:
            if not 200 <= response.status < 300:
                raise DeliveryFailed(f"webhook '{name}' answered HTTP {response.status}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise DeliveryFailed(f"webhook '{name}': {exc}") from exc


def email_send(recipients: list[str], subject: str, body: str) -> None:
    try:
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, recipients, fail_silently=False)
    except (OSError, ValueError) as exc:  # smtplib's errors are OSErrors
        raise DeliveryFailed(f"email: {exc}") from exc
