"""Running an approved change request: claim it (so one approver runs it, not two), read its plan again, refuse a
plan whose fingerprint moved since the request (stale: it must be asked for again), then run the change's own
service as the approver, authorised for that one target."""

from __future__ import annotations

from django.utils import timezone

from changes import states
from changes.actions import action_named
from changes.guard import authorised
from changes.models import ChangeRequest
from console.audit.actor import Actor
from console.audit.services import audit_refusal
from console.errors import Conflict, ConsoleError
from gateway.errors import GatewayError

MSG_CLAIMED = "Change request #{id} is being executed or was decided by someone else meanwhile."
MSG_STALE = ("Change request #{id} is stale: what it would change moved since it was asked for ({action} of "
             "{target}; fingerprint {was}, now {now}). Nothing was changed; ask for it again from a new preview.")
MSG_FAILED = "Change request #{id} failed: {error}"


def _claim(change: ChangeRequest, actor: Actor) -> None:
    claimed = ChangeRequest.objects.filter(pk=change.pk, status=states.PENDING).update(
        status=states.APPROVED, decided_at=timezone.now(), decided_by_name=actor.name)
    change.refresh_from_db()
    if not claimed:
        raise Conflict(MSG_CLAIMED.format(id=change.pk))


def _finish(change: ChangeRequest, status: str, *, result=None, error: str = "") -> None:
    states.check_transition(change.status, status)
    change.status, change.result, change.error = status, result, error
    change.save(update_fields=["status", "result", "error"])


def change_execute(change: ChangeRequest, *, actor: Actor, reason: str) -> ChangeRequest:
    """Runs the request's change as `actor` with `reason` (which names the request and who asked). A stale plan or a
    refusal of the service ends the request (stale, failed) and raises Conflict with why; the caller holds the
    request's change set, so the service's own audit rows name the request."""
    spec = action_named(change.action)
    _claim(change, actor)
    params = {"request": change.pk, "action": change.action}
    try:
        plan = spec.plan(change.cluster, change.kwargs)
    except (ConsoleError, GatewayError) as exc:
        _finish(change, states.FAILED, error=exc.message)
        audit_refusal(actor=actor, action="change.execute", cluster=change.cluster, target=change.target,
                      reason=reason, params=params, error=exc.message)
        raise Conflict(MSG_FAILED.format(id=change.pk, error=exc.message)) from exc
    if plan.fingerprint != change.fingerprint:
        message = MSG_STALE.format(id=change.pk, action=change.action, target=change.target, was=change.fingerprint,
                                   now=plan.fingerprint)
        _finish(change, states.STALE, error=message)
        audit_refusal(actor=actor, action="change.execute", cluster=change.cluster, target=change.target,
                      reason=reason, params={**params, "plan_now": plan.summary}, error=message)
        raise Conflict(message)
    try:
        with authorised(change.cluster, change.target):
            result = spec.run(actor=actor, cluster=change.cluster, kwargs=change.kwargs, reason=reason,
                              fingerprint=change.fingerprint)
    except (ConsoleError, GatewayError) as exc:
        # The service audited its own refusal or failure (under the request's change set).
        _finish(change, states.FAILED, error=exc.message)
        raise Conflict(MSG_FAILED.format(id=change.pk, error=exc.message)) from exc
    _finish(change, states.EXECUTED, result=result)
    return change
