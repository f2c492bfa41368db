"""Links into the audit log from elsewhere (the charts' markers): one event, or the events of a time span."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from django.urls import reverse


def audit_event_url(seq: int) -> str:
    return reverse("audit:detail", args=[seq])


def audit_span_url(*, cluster: str, first_s: float, last_s: float, target: str = "") -> str:
    """The log filtered to [first_s, last_s] (whole seconds, both ends in: the filter's end is exclusive)."""
    query = {"cluster": cluster, "since": datetime.fromtimestamp(int(first_s), UTC).isoformat(),
             "until": datetime.fromtimestamp(int(last_s) + 1, UTC).isoformat()}
    if target:
        query["target"] = target
    return f"{reverse('audit:list')}?{urlencode(query)}"
