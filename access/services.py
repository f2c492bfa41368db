"""ACL and SCRAM credential changes: previewed, admin only (checked by callers' role guards), audited.

Passwords pass straight to the broker: they are never stored, logged or put in an audit row."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from access.bindings import entry_json, range_refusal
from access.selectors import acls_list, scram_user_get
from changes.guard import change_guard
from console.audit.actor import Actor
from console.audit.guarded import MSG_REASON
from console.audit.services import audited
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.types import SCRAM_MECHANISMS, AclEntry, AclQuery

MSG_NOTHING_NEW = "Every one of these bindings exists already; nothing to create."
MSG_NOTHING_TO_DELETE = "None of these bindings exists (any more); nothing to delete."
MSG_CONFIRM_COUNT = "Type the number of bindings ({count}) to confirm the deletion."
MSG_CONFIRM_USER = "Type the user name ({user}) to confirm."
MSG_MECHANISM = "The mechanism is one of {choices}."
MSG_PASSWORD = "The password must not be empty."
MSG_NO_CREDENTIAL = "User {user!r} has no {mechanism} credential on cluster '{cluster}'."
# Kafka refuses fewer (ScramMechanism.minIterations) and more than this (SCRAM's own bound in the broker).
MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384
MSG_ITERATIONS = f"Iterations run from {MIN_ITERATIONS} to {MAX_ITERATIONS}."
READ_BACK_S = 5.0


@dataclass(frozen=True)
class AclChange:
    """What a create or delete would do: the bindings it changes and those it leaves as they are."""

    changed: tuple[AclEntry, ...]
    unchanged: tuple[AclEntry, ...]


def _present(cluster: str, entries: list[AclEntry]) -> set[AclEntry]:
    """Which of `entries` the authorizer holds now, read with one filter per principal."""
    present: set[AclEntry] = set()
    for principal in sorted({e.principal for e in entries}):
        present |= set(acls_list(cluster, AclQuery(principal=principal)))
    return present & set(entries)


def _target(entries) -> str:
    principals = sorted({e.principal for e in entries})
    return f"principal:{principals[0]}" if len(principals) == 1 else "acls"


def acl_change_target(entries) -> str:
    """What four-eyes protection knows an ACL change by: a protected cluster's access rules are protected whatever
    its topic and group patterns name (a binding's prefix or wildcard may cover a protected name)."""
    return "acl:" + _target(entries)


def _ranges_allowed(cluster: str, entries: list[AclEntry]) -> None:
    """A range host goes only to a cluster whose authorizer matches ranges: elsewhere it would be kept as text that
    no client address equals, and the binding would look in force while it never applies."""
    ranged = sorted({e.host for e in entries if "/" in e.host})
    if not ranged:
        return
    level = cluster_admin(cluster).finalized_features().level("metadata.version")
    refusal = range_refusal(ranged[0], cluster=cluster, metadata_level=level)
    if refusal:
        raise ConsoleError(refusal, field="host")


def acls_create_preview(*, cluster: str, entries: list[AclEntry]) -> AclChange:
    _ranges_allowed(cluster, entries)
    present = _present(cluster, entries)
    return AclChange(changed=tuple(sorted(set(entries) - present)), unchanged=tuple(sorted(present)))


def acls_create(*, actor: Actor, cluster: str, entries: list[AclEntry], reason: str) -> AclChange:
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    _ranges_allowed(cluster, entries)
    change_guard(actor=actor, action="acl.create", cluster=cluster, target=acl_change_target(entries), reason=reason,
                 params={"bindings": [entry_json(e) for e in entries]})
    change = acls_create_preview(cluster=cluster, entries=entries)
    if not change.changed:
        raise ConsoleError(MSG_NOTHING_NEW)
    with audited(actor=actor, action="acl.create", cluster=cluster, target=_target(change.changed), reason=reason,
                 params={"bindings": [entry_json(e) for e in change.changed]},
                 before={"present": [entry_json(e) for e in change.unchanged]}) as record:
        cluster_admin(cluster).create_acls(list(change.changed))
        record.after = {"present": [entry_json(e) for e in sorted(_present(cluster, entries))]}
    return change


def acls_delete_preview(*, cluster: str, entries: list[AclEntry]) -> AclChange:
    present = _present(cluster, entries)
    return AclChange(changed=tuple(sorted(present)), unchanged=tuple(sorted(set(entries) - present)))


def acls_delete(*, actor: Actor, cluster: str, entries: list[AclEntry], confirm: str, reason: str) -> list[AclEntry]:
    """Deletes exactly these bindings (never a pattern that could match more); confirmed by their count."""
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    change_guard(actor=actor, action="acl.delete", cluster=cluster, target=acl_change_target(entries), reason=reason,
                 params={"bindings": [entry_json(e) for e in entries]})
    change = acls_delete_preview(cluster=cluster, entries=entries)
    if not change.changed:
        raise ConsoleError(MSG_NOTHING_TO_DELETE)
    if confirm.strip() != str(len(change.changed)):
        raise ConsoleError(MSG_CONFIRM_COUNT.format(count=len(change.changed)))
    with audited(actor=actor, action="acl.delete", cluster=cluster, target=_target(change.changed), reason=reason,
                 params={"bindings": [entry_json(e) for e in change.changed]},
                 before={"present": [entry_json(e) for e in change.changed]}) as record:
        deleted = cluster_admin(cluster).delete_acls(list(change.changed))
        record.after = {"deleted": [entry_json(e) for e in deleted],
                        "present": [entry_json(e) for e in sorted(_present(cluster, list(change.changed)))]}
    return deleted


def _credentials_json(cluster: str, user: str) -> list[dict]:
    found = scram_user_get(cluster, user)
    return [{"mechanism": c.mechanism, "iterations": c.iterations} for c in (found.credentials if found else ())]


def _credentials_after(cluster: str, user: str, done: Callable[[list[dict]], bool]) -> list[dict]:
    """The credentials read back once the change shows: the broker answers the alteration before its metadata
    carries it, and an audit row must not say a deleted credential is still there. Past READ_BACK_S, what is
    read then (the audit says what the broker said)."""
    deadline = time.monotonic() + READ_BACK_S
    while not done(found := _credentials_json(cluster, user)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def scram_credential_set(*, actor: Actor, cluster: str, user: str, mechanism: str, password: str,
                         iterations: int = MIN_ITERATIONS, reason: str) -> None:
    """Creates the user's credential for `mechanism`, or replaces its password."""
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    if mechanism not in SCRAM_MECHANISMS:
        raise ConsoleError(MSG_MECHANISM.format(choices=", ".join(SCRAM_MECHANISMS)))
    if not password:
        raise ConsoleError(MSG_PASSWORD)
    if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise ConsoleError(MSG_ITERATIONS)
    with audited(actor=actor, action="user.credential.set", cluster=cluster, target=f"user:{user}", reason=reason,
                 params={"user": user, "mechanism": mechanism, "iterations": iterations},
                 before={"credentials": _credentials_json(cluster, user)}) as record:
        cluster_admin(cluster).upsert_scram_credential(user, mechanism=mechanism, iterations=iterations,
                                                       password=password)
        wanted = {"mechanism": mechanism, "iterations": iterations}
        record.after = {"credentials": _credentials_after(cluster, user, lambda found: wanted in found)}


def scram_credential_delete(*, actor: Actor, cluster: str, user: str, mechanism: str, confirm: str,
                            reason: str) -> None:
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    if confirm != user:
        raise ConsoleError(MSG_CONFIRM_USER.format(user=user))
    before = _credentials_json(cluster, user)
    if not any(c["mechanism"] == mechanism for c in before):
        raise ConsoleError(MSG_NO_CREDENTIAL.format(user=user, mechanism=mechanism, cluster=cluster))
    with audited(actor=actor, action="user.credential.delete", cluster=cluster, target=f"user:{user}",
                 reason=reason, params={"user": user, "mechanism": mechanism}, before={"credentials": before}) as record:
        cluster_admin(cluster).delete_scram_credential(user, mechanism=mechanism)
        record.after = {"credentials": _credentials_after(
            cluster, user, lambda found: all(c["mechanism"] != mechanism for c in found))}


MSG_QUOTA_ENTITY = "A quota is set on a user, a client id, or both (each a name, or the default)."
MSG_QUOTA_VALUE = "Quota {key} must be a number of 0 or more, not {value!r}."
MSG_QUOTA_NOTHING = "Say which quotas to set or remove."


def _quota_values(cluster: str, user, client_id, user_is_default: bool, client_id_is_default: bool) -> dict:
    for q in cluster_admin(cluster).describe_client_quotas():
        if (q.user, q.client_id, q.user_is_default, q.client_id_is_default) == (
                user, client_id, user_is_default, client_id_is_default):
            return dict(sorted(q.values.items()))
    return {}


def client_quota_alter(*, actor: Actor, cluster: str, user: str | None = None, client_id: str | None = None,
                       user_is_default: bool = False, client_id_is_default: bool = False,
                       set_values: dict[str, float], delete: list[str], reason: str) -> dict:
    """Sets and removes client quotas of one entity (AlterClientQuotas); audited with its quotas before and after,
    as Kafka reads them back."""
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    if user is None and client_id is None and not user_is_default and not client_id_is_default:
        raise ConsoleError(MSG_QUOTA_ENTITY)
    if not set_values and not delete:
        raise ConsoleError(MSG_QUOTA_NOTHING)
    for key, value in set_values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConsoleError(MSG_QUOTA_VALUE.format(key=key, value=value))
    entity = {"user": "<default>" if user_is_default else user,
              "client_id": "<default>" if client_id_is_default else client_id}
    target = "quota:" + ",".join(f"{k}={v}" for k, v in entity.items() if v is not None)
    arguments = dict(user=user, client_id=client_id, user_is_default=user_is_default,
                     client_id_is_default=client_id_is_default)
    with audited(actor=actor, action="quota.alter", cluster=cluster, target=target, reason=reason,
                 params={**entity, "set": set_values, "delete": delete},
                 before=_quota_values(cluster, **arguments)) as record:
        cluster_admin(cluster).alter_client_quotas(**arguments, set_values=set_values, delete=delete)
        record.after = _quota_values(cluster, **arguments)
    return record.after
