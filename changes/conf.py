"""Settings of four-eyes changes. settings.py is full, so they are read here: a value in settings wins, then the
environment, then the default."""

from __future__ import annotations

import os

from django.conf import settings


def _int(name: str, default: int) -> int:
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name, "")
    try:
        return int(value) if str(value).strip() else default
    except ValueError:
        return default


def change_request_ttl_hours() -> int:
    """How long a change request waits for its approvals before it expires (hours, at least 1)."""
    # Hours a change request waits for its approvals before it expires (at least 1).
    return max(1, _int("CHANGE_REQUEST_TTL_HOURS", 24))


def change_approvals() -> int:
    """Approvals a change request needs, besides its requester's own asking, where the protection says none."""
    # Approvals by people other than the requester that a change request needs, where its protection names none.
    return max(1, _int("CHANGE_APPROVALS", 1))
