"""Four-eyes changes: protecting a cluster, asking for a change on a protected target, approving, rejecting,
breaking the glass, expiring. Every one is audited here; the audit rows of a request, its approvals and its
execution share the request's correlation id (its own row's, then params["change_set"])."""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from alerts.channels import webhook_check
from changes import conf, states
from changes.actions import action_named
from changes.execution import change_execute
from changes.guard import protection_covering
from changes.models import ChangeApproval, ChangeRequest, Protection
from changes.notify import BREAK_GLASS, REQUESTED, change_notify
from changes.patterns import PatternError, parse_patterns
from console.accounts.roles import Role, require_role
from console.audit.actor import Actor
from console.audit.guarded import reason_checked
from console.audit.services import audit_record, audit_refusal, audited, change_set
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_get
from console.errors import Conflict, ConsoleError, NotFound, PermissionRefused

MSG_NOT_PROTECTED = ("{target} on cluster '{cluster}' is not protected: change it directly, no request is needed.")
MSG_PERSON = "A change request is made and decided by a person: this actor names no user."
MSG_NO_REQUEST = "There is no change request #{id}."
MSG_NOT_PENDING = "Change request #{id} is {status}: only a pending request can be {what}."
MSG_OWN = "Change request #{id} is your own: another person must approve it."
MSG_TWICE = "You approved change request #{id} already; it needs another person's approval."
MSG_APPROVALS = "The number of approvals is 1 to 5."
MSG_NOTHING_PROTECTED = "Name the topics or groups to protect (a pattern a line), or protect the whole cluster."
APPROVALS_MAX = 5


def _protection_json(p: Protection | None) -> dict | None:
    if p is None:
        return None
    return {"whole_cluster": p.whole_cluster, "topic_patterns": p.topic_patterns, "group_patterns": p.group_patterns,
            "approvals": p.approvals, "webhook": p.webhook}


def protection_set(*, actor: Actor, cluster: str, whole_cluster: bool, topic_patterns: list[str],
                   group_patterns: list[str], approvals: int | None, webhook: str, reason: str) -> Protection:
    """Protects `cluster` (all of it, or the topics and groups the patterns match). Patterns are checked whole
    before anything is stored; callers check the admin role, and so does this."""
    require_role(actor.user, Role.ADMIN)
    reason_checked(reason)
    cluster_get(cluster)
    topic_patterns = [p.strip() for p in topic_patterns if p.strip()]
    group_patterns = [p.strip() for p in group_patterns if p.strip()]
    if not whole_cluster and not topic_patterns and not group_patterns:
        raise ConsoleError(MSG_NOTHING_PROTECTED, field="topic_patterns")
    for field, patterns in (("topic_patterns", topic_patterns), ("group_patterns", group_patterns)):
        try:
            parse_patterns(patterns)
        except PatternError as exc:
            raise ConsoleError(exc.message, field=field) from exc
    if approvals is not None and not 1 <= approvals <= APPROVALS_MAX:
        raise ConsoleError(MSG_APPROVALS, field="approvals")
    webhook_check(webhook)
    current = Protection.objects.filter(cluster=cluster).first()
    before = _protection_json(current)
    protection = current or Protection(cluster=cluster)
    protection.whole_cluster = whole_cluster
    protection.topic_patterns, protection.group_patterns = topic_patterns, group_patterns
    protection.approvals, protection.webhook = approvals, webhook
    protection.updated_by, protection.updated_at = actor.name, timezone.now()
    with audited(actor=actor, action="cluster.protection.set", cluster=cluster, target=f"cluster:{cluster}",
                 reason=reason, params=_protection_json(protection), before=before) as record:
        protection.save()
        record.after = _protection_json(protection)
    return protection


def protection_clear(*, actor: Actor, cluster: str, reason: str) -> None:
    """Ends the protection: changes run directly again. Pending requests stay pending, to be decided or expire."""
    require_role(actor.user, Role.ADMIN)
    reason_checked(reason)
    current = Protection.objects.filter(cluster=cluster).first()
    if current is None:
        raise NotFound(f"Cluster '{cluster}' is not protected.")
    with audited(actor=actor, action="cluster.protection.clear", cluster=cluster, target=f"cluster:{cluster}",
                 reason=reason, before=_protection_json(current)):
        current.delete()


def _person(actor: Actor) -> None:
    if actor.user is None:
        raise PermissionRefused(MSG_PERSON)


def change_request_create(*, actor: Actor, action: str, cluster: str, kwargs: dict, reason: str) -> ChangeRequest:
    """A change on a protected target, asked for: its plan is read now and kept with its fingerprint; the
    protection's channel is told. Nothing changes in Kafka."""
    spec = action_named(action)
    _person(actor)
    require_role(actor.user, spec.role)
    reason_checked(reason)
    target = spec.target(kwargs)
    protection = protection_covering(cluster, target)
    if protection is None:
        raise ConsoleError(MSG_NOT_PROTECTED.format(target=target, cluster=cluster))
    plan = spec.plan(cluster, kwargs)
    now = timezone.now()
    change = ChangeRequest(cluster=cluster, action=action, target=target, kwargs=kwargs, plan=plan.summary,
                           fingerprint=plan.fingerprint, reason=reason, requested_by=actor.user,
                           requested_by_name=actor.name, requested_at=now,
                           expires_at=now + timedelta(hours=conf.change_request_ttl_hours()),
                           approvals_required=protection.approvals or conf.change_approvals())
    with audited(actor=actor, action="change.request", cluster=cluster, target=target, reason=reason,
                 params={"action": action, "kwargs": kwargs, "fingerprint": plan.fingerprint}) as record:
        change.correlation_id = record.intent.correlation_id
        change.save()
        record.after = {"request": change.pk, "expires_at": change.expires_at.isoformat(),
                        "approvals_required": change.approvals_required}
    change_notify(change, REQUESTED, who=actor.name, reason=reason)
    return change


def change_request_get(request_id: int) -> ChangeRequest:
    change = ChangeRequest.objects.filter(pk=request_id).first()
    if change is None:
        raise NotFound(MSG_NO_REQUEST.format(id=request_id))
    return change


def _pending(change: ChangeRequest, what: str) -> None:
    """Expires it first if its time is up, then refuses anything but a pending request."""
    if change.status == states.PENDING and change.expires_at <= timezone.now():
        _expire(change)
    if change.status != states.PENDING:
        raise Conflict(MSG_NOT_PENDING.format(id=change.pk, status=change.status, what=what))


def _params(change: ChangeRequest, **extra) -> dict:
    return {"request": change.pk, "action": change.action, **extra}


def change_request_approve(*, actor: Actor, request_id: int, reason: str = "") -> ChangeRequest:
    """One approval, by someone other than the requester holding the change's role; the last one needed executes
    the change as the approver (changes/execution.py). Returns the request as it ended."""
    change = change_request_get(request_id)
    spec = action_named(change.action)
    _person(actor)
    with change_set(change.correlation_id):
        require_role(actor.user, spec.role)
        _pending(change, "approved")
        refusal = ""
        if actor.user.pk == change.requested_by_id:
            refusal = MSG_OWN.format(id=change.pk)
        elif change.approvals.filter(user=actor.user).exists():
            refusal = MSG_TWICE.format(id=change.pk)
        if refusal:
            audit_refusal(actor=actor, action="change.approve", cluster=change.cluster, target=change.target,
                          reason=reason, params=_params(change), error=refusal)
            raise PermissionRefused(refusal)
        with audited(actor=actor, action="change.approve", cluster=change.cluster, target=change.target,
                     reason=reason, params=_params(change)) as record:
            ChangeApproval.objects.create(request=change, user=actor.user, user_name=actor.name,
                                          approved_at=timezone.now(), reason=reason)
            count = change.approvals.count()
            record.after = {"approvals": count, "required": change.approvals_required}
        if not states.approvals_met(count, change.approvals_required):
            return change
        names = ", ".join(change.approvals.values_list("user_name", flat=True))
        why = f"{change.reason} [change request #{change.pk} by {change.requested_by_name}, approved by {names}]"
        return change_execute(change, actor=actor, reason=why)


def change_request_reject(*, actor: Actor, request_id: int, reason: str) -> ChangeRequest:
    """Closes a pending request unexecuted: another person with the change's role, or the requester withdrawing."""
    change = change_request_get(request_id)
    spec = action_named(change.action)
    _person(actor)
    reason_checked(reason)
    with change_set(change.correlation_id):
        if actor.user.pk != change.requested_by_id:
            require_role(actor.user, spec.role)
        _pending(change, "rejected")
        with audited(actor=actor, action="change.reject", cluster=change.cluster, target=change.target,
                     reason=reason, params=_params(change)):
            _close(change, states.REJECTED, by=actor.name, reason=reason)
    return change


def change_request_break_glass(*, actor: Actor, request_id: int, reason: str) -> ChangeRequest:
    """An admin runs a pending request now, without its approvals: audited as its own action and told to the
    protection's channel. The plan is still checked against its fingerprint."""
    change = change_request_get(request_id)
    _person(actor)
    require_role(actor.user, Role.ADMIN)
    reason_checked(reason)
    with change_set(change.correlation_id):
        _pending(change, "run by break-glass")
        why = f"BREAK-GLASS: {reason} [change request #{change.pk} by {change.requested_by_name}: {change.reason}]"
        try:
            with audited(actor=actor, action="change.break_glass", cluster=change.cluster, target=change.target,
                         reason=reason, params=_params(change)) as record:
                change.break_glass = True
                change.save(update_fields=["break_glass"])
                change_execute(change, actor=actor, reason=why)
                record.after = {"status": change.status}
        finally:
            change_notify(change, BREAK_GLASS, who=actor.name, reason=reason)
    return change


def _close(change: ChangeRequest, status: str, *, by: str, reason: str) -> bool:
    """Moves a pending request to `status` unless another process moved it first; False then."""
    states.check_transition(states.PENDING, status)
    now = timezone.now()
    moved = ChangeRequest.objects.filter(pk=change.pk, status=states.PENDING).update(
        status=status, decided_at=now, decided_by_name=by, decision_reason=reason)
    change.refresh_from_db()
    return bool(moved)


def _expire(change: ChangeRequest) -> None:
    with change_set(change.correlation_id), transaction.atomic():
        if _close(change, states.EXPIRED, by="system", reason="expired"):
            audit_record(actor=Actor.system(), action="change.expire", outcome=AuditEvent.Outcome.SUCCESS,
                         cluster=change.cluster, target=change.target, reason="no decision before it expired",
                         params=_params(change, expires_at=change.expires_at.isoformat()))


def change_requests_expire() -> int:
    """Every pending request past its expiry becomes expired (Celery beat runs it; deciding one also does)."""
    due = list(ChangeRequest.objects.filter(status=states.PENDING, expires_at__lte=timezone.now()))
    for change in due:
        _expire(change)
    return len(due)
