from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, Q, QuerySet

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


@dataclass(frozen=True)
class AuditAction:
    """One action as the log's page shows it: the row that ended it (or its intent, while it runs or if it never
    ended) joined with its intent by correlation id and action."""

    head: AuditEvent
    intent: AuditEvent | None

    @property
    def result(self) -> str:
        return "running" if self.head.outcome == AuditEvent.Outcome.INTENT else self.head.outcome

    @property
    def duration_s(self) -> float | None:
        if self.intent is None or self.intent is self.head:
            return None
        return (self.head.created_at - self.intent.created_at).total_seconds()


def audit_actions(filters: AuditFilters) -> QuerySet[AuditEvent]:
    """The head row of every action matching the filters, newest first: rows that ended an action (success,
    failure, refused) and intents nothing ended yet. The outcome filter matches the head, so "intent" finds the
    actions still open. An intent ended later has the same correlation id and action (an action run under another
    one's correlation id, such as a replay's cancel, is an action of its own)."""
    ended_later = AuditEvent.objects.filter(correlation_id=OuterRef("correlation_id"), action=OuterRef("action"),
                                            seq__gt=OuterRef("seq")).exclude(outcome=AuditEvent.Outcome.INTENT)
    return audit_events(filters).filter(~Q(outcome=AuditEvent.Outcome.INTENT) | ~Exists(ended_later))


def with_intents(heads) -> list[AuditAction]:
    """The page's head rows joined with their intents (one query)."""
    heads = list(heads)
    intents = {}
    ids = {h.correlation_id for h in heads if h.outcome != AuditEvent.Outcome.INTENT}
    if ids:
        for intent in AuditEvent.objects.filter(correlation_id__in=ids, outcome=AuditEvent.Outcome.INTENT):
            intents[(intent.correlation_id, intent.action)] = intent
    return [AuditAction(head=h, intent=h if h.outcome == AuditEvent.Outcome.INTENT else
                        intents.get((h.correlation_id, h.action))) for h in heads]


def action_outcome(correlation_id) -> AuditEvent | None:
    """The row that ended an action (success, failure or refusal), or None while it runs."""
    return (AuditEvent.objects.filter(correlation_id=correlation_id).exclude(outcome=AuditEvent.Outcome.INTENT)
            .order_by("-seq").first())


def audit_chain_report() -> ChainReport:
    return verify_chain(AuditEvent.objects.order_by("seq").iterator(chunk_size=2000))
