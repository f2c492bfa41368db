"""The check every protected service makes before it changes anything: on a protected target, the change runs only
as the execution of an approved change request (or a break-glass), never straight from a page, the shell, the API
or a bulk action. Services call `change_guard`; changes/execution.py opens `authorised` around the one service
call it makes.

Imported by the apps whose services it guards, so it imports nothing of theirs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from changes.models import Protection
from changes.patterns import any_matches
from console.audit.actor import Actor
from console.audit.guarded import refuse_if
from console.errors import Conflict

MSG_PROTECTED = ("{target} on cluster '{cluster}' is protected: this change needs a change request that another "
                 "person approves (the console's pages, `manage.py` and the API's own change ask for one).")
# Which kind of target each kind of pattern list covers.
_PATTERNS_OF = {"topic": "topic_patterns", "group": "group_patterns"}

_authorised: ContextVar[tuple[str, str] | None] = ContextVar("change_authorised", default=None)


class ChangeRequestRequired(Conflict):
    """The target is protected: the change must go through a change request."""


def protection_covering(cluster: str, target: str) -> Protection | None:
    """The cluster's protection if it covers `target` ("topic:NAME" or "group:NAME"), else None."""
    protection = Protection.objects.filter(cluster=cluster).first()
    if protection is None:
        return None
    if protection.whole_cluster:
        return protection
    kind, _, name = target.partition(":")
    field = _PATTERNS_OF.get(kind)
    if field is None:
        return protection  # a kind no pattern list names: the cluster's protection holds
    return protection if any_matches(getattr(protection, field), name) else None


def is_protected(cluster: str, target: str) -> bool:
    return protection_covering(cluster, target) is not None


@contextmanager
def authorised(cluster: str, target: str) -> Iterator[None]:
    """Inside, the guarded services may change `target` on `cluster`: an approved request is being executed."""
    token = _authorised.set((cluster, target))
    try:
        yield
    finally:
        _authorised.reset(token)


def change_guard(*, actor: Actor, action: str, cluster: str, target: str, reason: str,
                 params: dict | None = None) -> None:
    """Refuses (audited, 409) a change to a protected target unless an approved request is executing it."""
    if _authorised.get() == (cluster, target) or not is_protected(cluster, target):
        return
    kind, _, name = target.partition(":")
    refuse_if(MSG_PROTECTED.format(target=f"{kind.capitalize()} '{name}'", cluster=cluster), actor=actor,
              action=action, cluster=cluster, target=target, reason=reason, params=params,
              error=ChangeRequestRequired)
