from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from console.audit.chain import ChainReport, verify_chain
from console.audit.models import AuditEvent


@dataclass(frozen=True)
class AuditFilters:
    actor: str = ""
    action: str = ""
    target: str = ""
    cluster: str = ""
    outcome: str = ""
    since: datetime | None = None
    until: datetime | None = None


def audit_events(filters: AuditFilters) -> QuerySet[AuditEvent]:
    """Newest first. Text filters match substrings, except cluster and outcome, which match exactly."""
    events = AuditEvent.objects.all()
    if filters.actor:
        events = events.filter(actor_name__icontains=filters.actor)
    if filters.action:
        events = events.filter(action__icontains=filters.action)
    if filters.target:
        events = events.filter(target__icontains=filters.target)
    if filters.cluster:
        events = events.filter(cluster=filters.cluster)
    if filters.outcome:
        events = events.filter(outcome=filters.outcome)
    if filters.since:
        events = events.filter(created_at__gte=filters.since)
    if filters.until:
        events = events.filter(created_at__lt=filters.until)
    return events.order_by("-seq")


def audit_chain_report() -> ChainReport:
    return verify_chain(AuditEvent.objects.order_by("seq").iterator(chunk_size=2000))
