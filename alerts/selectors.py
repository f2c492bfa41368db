"""Reads for the alerts page and the shell."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from alerts.models import Alert, AlertRule, Silence


def rules_list() -> list[AlertRule]:
    return list(AlertRule.objects.all())


def alerts_open() -> list[Alert]:
    return list(Alert.objects.select_related("rule").exclude(state=Alert.RESOLVED))


def alerts_recent_resolved(limit: int = 50) -> list[Alert]:
    return list(Alert.objects.select_related("rule").filter(state=Alert.RESOLVED).order_by("-resolved_at")[:limit])


def silences_active(now: datetime | None = None) -> list[Silence]:
    return list(Silence.objects.select_related("rule").filter(ends_at__gt=now or timezone.now()))
