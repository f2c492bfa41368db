"""Reading change requests and protections. Nothing here writes: a pending request past its expiry reads as
expired (states.effective_status) until the beat task or a decision writes it."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.utils import timezone

from changes import states
from changes.models import ChangeRequest, Protection
from console.audit.models import AuditEvent


def protection_of(cluster: str) -> Protection | None:
    return Protection.objects.filter(cluster=cluster).first()


def protections() -> list[Protection]:
    return list(Protection.objects.all())


def change_requests(*, status: str = "", cluster: str = "", limit: int = 200) -> list[ChangeRequest]:
    """Newest first. `status` "pending" means still waiting now (not past its expiry)."""
    rows: QuerySet = ChangeRequest.objects.prefetch_related("approvals")
    now = timezone.now()
    if cluster:
        rows = rows.filter(cluster=cluster)
    if status == states.PENDING:
        rows = rows.filter(status=states.PENDING, expires_at__gt=now)
    elif status == states.EXPIRED:
        rows = rows.filter(Q(status=states.EXPIRED) | Q(status=states.PENDING, expires_at__lte=now))
    elif status:
        rows = rows.filter(status=status)
    return list(rows[:limit])


def status_now(change: ChangeRequest) -> str:
    return states.effective_status(change.status, change.expires_at, timezone.now())


def change_audit_trail(change: ChangeRequest) -> list[AuditEvent]:
    """The audit rows of the request, its approvals, its execution and what the service itself wrote, oldest first."""
    key = str(change.correlation_id)
    return list(AuditEvent.objects.filter(Q(correlation_id=change.correlation_id) | Q(params__change_set=key))
                .order_by("seq"))
