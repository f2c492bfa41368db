"""Alerts, the audit log, masking rules and topic policies."""

from __future__ import annotations

from datetime import datetime

from ninja import Query, Router, Schema
from pydantic import Field

from alerts import selectors as alert_selectors
from alerts.serializers import alerts_json
from api.access import allow, call_of
from api.pagination import decode_cursor, encode_cursor
from api.schemas import PROBLEMS, Page, limit_field
from console.accounts.roles import Role
from console.audit.selectors import AuditFilters, audit_events
from console.witness.records import event_body
from console.errors import ConsoleError
from masking.selectors import mask_rule_list
from masking.serializers import mask_rule_json
from topics.policies.selectors import policy_rows
from topics.serializers import policies_json

router = Router(tags=["operations"])


@router.get("/alerts", response={200: dict, **PROBLEMS}, summary="Alert rules, open alerts, silences")
def alert_list(request):
    """`manage.py alerts list --format json`: rules, open alerts and active silences (of the clusters the token
    reaches)."""
    allow(request)
    token = call_of(request).token
    reach = (lambda cluster: not cluster or token.reaches(cluster))
    return alerts_json([r for r in alert_selectors.rules_list() if reach(r.cluster)],
                       [a for a in alert_selectors.alerts_open() if reach(a.cluster)],
                       [s for s in alert_selectors.silences_active() if reach(s.cluster)])


class AuditQuery(Schema):
    actor: str = Field("", description="who (contains)")
    action: str = Field("", description="what (contains), e.g. group.offsets.reset")
    target: str = Field("", description="on what (contains), e.g. group:billing")
    cluster: str = ""
    outcome: str = Field("", description="intent, success, failure or refused")
    since: datetime | None = None
    until: datetime | None = None
    cursor: str | None = None
    limit: int = limit_field()


@router.get("/audit", response={200: Page, **PROBLEMS}, summary="The audit log")
def audit_list(request, query: Query[AuditQuery]):
    """The audit page's filters, newest first; each event as the witness topic holds it (its keyed hash and the
    previous one's). A token limited to some clusters sees their events only."""
    allow(request)
    token = call_of(request).token
    events = audit_events(AuditFilters(actor=query.actor, action=query.action, target=query.target,
                                       cluster=query.cluster, outcome=query.outcome, since=query.since,
                                       until=query.until))
    if token.clusters:
        events = events.filter(cluster__in=token.clusters)
    if query.cursor:
        before = decode_cursor(query.cursor)
        if not isinstance(before, int):
            raise ConsoleError("This cursor was not made by this API.", field="cursor")
        events = events.filter(seq__lt=before)
    chosen = list(events[:query.limit + 1])
    more = len(chosen) > query.limit
    chosen = chosen[:query.limit]
    return {"items": [event_body(e) for e in chosen], "next_cursor": encode_cursor(chosen[-1].seq) if more else None,
            "total": None if query.cursor else events.count()}


@router.get("/clusters/{cluster}/masking-rules", response={200: list[dict], **PROBLEMS},
            summary="Masking rules")
def masking_rules(request, cluster: str):
    """`manage.py masking list --format json` (admin, as the page)."""
    allow(request, role=Role.ADMIN, cluster=cluster)
    return [mask_rule_json(r) for r in mask_rule_list(cluster)]


@router.get("/clusters/{cluster}/topic-policies", response={200: list[dict], **PROBLEMS}, summary="Topic policies")
def topic_policies(request, cluster: str):
    """`manage.py topic_policies list --format json`."""
    allow(request, cluster=cluster)
    return policies_json(policy_rows(cluster))
