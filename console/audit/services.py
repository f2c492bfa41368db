"""Writing the audit log. Services call `audited(...)` around every change they make to Kafka or a job."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, transaction
from django.utils import timezone

from console.audit.actor import Actor
from console.audit.chain import GENESIS_HASH, event_hash
from console.audit.models import AuditEvent

_APPEND_ATTEMPTS = 20
# The change set the events being written belong to (config as code applies a file as one): its correlation id.
_change_set: ContextVar[uuid.UUID | None] = ContextVar("audit_change_set", default=None)


@contextmanager
def change_set(correlation_id: uuid.UUID) -> Iterator[None]:
    """Every event written inside names `correlation_id` as its change set (params["change_set"]), so the rows of
    several services' changes read as one change (config_as_code's apply)."""
    token = _change_set.set(correlation_id)
    try:
        yield
    finally:
        _change_set.reset(token)


def _with_context(actor: Actor, params: dict | None) -> dict | None:
    """The token an API or MCP call acted with, and the change set, kept whole beside the service's params."""
    extra = {}
    if actor.token is not None:
        extra["token"] = {"id": actor.token.id, "name": actor.token.name}
    if (current := _change_set.get()) is not None:
        extra["change_set"] = str(current)
    return {**(params or {}), **extra} if extra else params


def _json(value: Any) -> Any:
    """Normalises to what a JSONField gives back, so the hash is the same before and after storage."""
    return None if value is None else json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def audit_record(
    *,
    actor: Actor,
    action: str,
    outcome: str,
    cluster: str = "",
    target: str = "",
    reason: str = "",
    params: dict | None = None,
    before: Any = None,
    after: Any = None,
    error: str = "",
    correlation_id: uuid.UUID | None = None,
) -> AuditEvent:
    """Appends one event at the head of the chain and commits it before returning."""
    params = _with_context(actor, params)
    for _ in range(_APPEND_ATTEMPTS):
        try:
            with transaction.atomic():
                last = AuditEvent.objects.order_by("-seq").values_list("seq", "hash").first()
                seq, prev_hash = (last[0] + 1, last[1]) if last else (1, GENESIS_HASH)
                event = AuditEvent(
                    seq=seq,
                    created_at=timezone.now(),
                    actor=actor.user,
                    actor_name=actor.name,
                    source=actor.source,
                    remote_addr=actor.remote_addr,
                    cluster=cluster,
                    action=action,
                    # The column holds 600 characters; a longer name (a principal, a user) stays whole in params.
                    target=target[:AuditEvent._meta.get_field("target").max_length],
                    reason=reason,
                    params=_json(params) or {},
                    before=_json(before),
                    after=_json(after),
                    outcome=outcome,
                    error=error,
                    correlation_id=correlation_id or uuid.uuid4(),
                    prev_hash=prev_hash,
                )
                event.hash = event_hash(event)
                event.save()
                return event
        except IntegrityError:
            continue  # another writer took this sequence number: read the new head and try again
    raise RuntimeError("Could not append to the audit log: too many concurrent writers")


@dataclass
class AuditedAction:
    """What a service fills in while it acts; written into the outcome row."""

    intent: AuditEvent
    before: Any = None
    after: Any = None
    details: dict = field(default_factory=dict)


@contextmanager
def audited(
    *,
    actor: Actor,
    action: str,
    cluster: str = "",
    target: str = "",
    reason: str = "",
    params: dict | None = None,
    before: Any = None,
) -> Iterator[AuditedAction]:
    """Writes the intent row, runs the block, then writes a success or failure row with the same correlation id."""
    intent = audit_record(
        actor=actor, action=action, outcome=AuditEvent.Outcome.INTENT, cluster=cluster, target=target,
        reason=reason, params=params, before=before,
    )
    record = AuditedAction(intent=intent, before=before)
    common = dict(actor=actor, action=action, cluster=cluster, target=target, reason=reason,
                  correlation_id=intent.correlation_id)
    try:
        yield record
    except BaseException as exc:
        message = getattr(exc, "message", "") or f"{type(exc).__name__}: {exc}"
        audit_record(**common, outcome=AuditEvent.Outcome.FAILURE, params={**(params or {}), **record.details},
                     before=record.before, after=record.after, error=message)
        raise
    audit_record(**common, outcome=AuditEvent.Outcome.SUCCESS, params={**(params or {}), **record.details},
                 before=record.before, after=record.after)


def audit_refusal(*, actor: Actor, action: str, cluster: str, target: str, reason: str, params: dict | None,
                  error: str) -> AuditEvent:
    """Records an attempt that was refused before anything was changed (e.g. the group was active)."""
    return audit_record(actor=actor, action=action, outcome=AuditEvent.Outcome.REFUSED, cluster=cluster,
                        target=target, reason=reason, params=params, error=error)
