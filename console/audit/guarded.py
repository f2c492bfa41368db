"""The skeleton every guarded change shares, whatever it changes (a group's offsets, a connector's, a topic, a
connector): the person types the name of what they change and says why; a refusal the state calls for (an active
group, a running connector, offsets moved since the preview) is audited and raised before anything is touched;
then the change runs inside `audited` (its intent first, its outcome with before and after), and the caller reads
what it changed back into `record.after`.

Services use the three pieces in the order their checks need: `change_checked` first (nothing read yet),
`refuse_if` once the state is known, `guarded_change` around the change itself."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from console.audit.actor import Actor
from console.audit.services import AuditedAction, audit_refusal, audited
from console.errors import Conflict, ConsoleError

MSG_REASON = "A reason is required: it goes into the audit log."
MSG_CONFIRM = "Type the {what} name '{name}' exactly to confirm."


def change_checked(*, confirm: str, name: str, what: str, reason: str, message: str = "",
                   reason_required: bool = True) -> None:
    """Raises ConsoleError unless `confirm` is `name` exactly and a reason is given (`message`: the service's own
    wording of the confirmation's refusal)."""
    if confirm != name:
        raise ConsoleError(message or MSG_CONFIRM.format(what=what, name=name))
    if reason_required:
        reason_checked(reason)


def reason_checked(reason: str) -> None:
    if not reason.strip():
        raise ConsoleError(MSG_REASON)


def refuse_if(refusal: str, *, actor: Actor, action: str, cluster: str, target: str, reason: str,
              params: dict | None = None, error: type[ConsoleError] = Conflict) -> None:
    """When `refusal` says why the change cannot run now, audits it as refused and raises `error` with it."""
    if refusal:
        audit_refusal(actor=actor, action=action, cluster=cluster, target=target, reason=reason, params=params,
                      error=refusal)
        raise error(refusal)


@contextmanager
def guarded_change(*, actor: Actor, action: str, cluster: str, target: str, reason: str, params: dict | None = None,
                   before: object = None, reason_required: bool = True) -> Iterator[AuditedAction]:
    """The change itself, audited: the caller changes Kafka inside the block and sets `record.after` to what it
    reads back."""
    if reason_required:
        reason_checked(reason)
    with audited(actor=actor, action=action, cluster=cluster, target=target, reason=reason, params=params,
                 before=before) as record:
        yield record
