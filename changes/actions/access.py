"""The ACL changes a request can hold: creating and deleting exact bindings. A protected cluster's ACLs are all
protected (access/services.py acl_change_target)."""

from __future__ import annotations

from access import services as access_services
from access.bindings import bindings_for, entry_json, stored_binding
from changes.registry import ChangeAction, Plan, fingerprint_of
from console.accounts.roles import Role
from console.errors import ConsoleError

CREATE, DELETE = "acl.create", "acl.delete"
_FIELDS = ("principal", "resource_type", "resource_name", "pattern_type", "operation", "permission", "host")


def acl_kwargs(entries) -> dict:
    return {"bindings": [entry_json(e) for e in entries]}


def _entries(kwargs: dict):
    return [bindings_for(principal=b["principal"], resource_type=b["resource_type"],
                         resource_name=b["resource_name"], pattern_type=b["pattern_type"],
                         operations=[b["operation"]], permission=b["permission"], host=b["host"])[0]
            for b in kwargs["bindings"]]


def _stored_entries(kwargs: dict):
    """The bindings a delete names, hosts as the authorizer holds them (access.bindings.stored_binding)."""
    return [stored_binding(**{key: b[key] for key in _FIELDS}) for b in kwargs["bindings"]]


def _plan(change, empty_message: str) -> Plan:
    if not change.changed:
        raise ConsoleError(empty_message)
    summary = {"changed": [entry_json(e) for e in change.changed],
               "unchanged": [entry_json(e) for e in change.unchanged]}
    return Plan(summary=summary, fingerprint=fingerprint_of(summary))


def _create_plan(cluster: str, kwargs: dict) -> Plan:
    return _plan(access_services.acls_create_preview(cluster=cluster, entries=_entries(kwargs)),
                 access_services.MSG_NOTHING_NEW)


def _create_run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    change = access_services.acls_create(actor=actor, cluster=cluster, entries=_entries(kwargs), reason=reason)
    return [entry_json(e) for e in change.changed]


def _delete_plan(cluster: str, kwargs: dict) -> Plan:
    return _plan(access_services.acls_delete_preview(cluster=cluster, entries=_stored_entries(kwargs)),
                 access_services.MSG_NOTHING_TO_DELETE)


def _delete_run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    entries = _stored_entries(kwargs)
    # The count the requester confirmed: the plan's, unchanged since (execution checked its fingerprint).
    count = len(access_services.acls_delete_preview(cluster=cluster, entries=entries).changed)
    deleted = access_services.acls_delete(actor=actor, cluster=cluster, entries=entries, confirm=str(count),
                                          reason=reason)
    return [entry_json(e) for e in deleted]


def _target(kwargs: dict) -> str:
    return access_services.acl_change_target(_stored_entries(kwargs))


ACTIONS = (
    ChangeAction(CREATE, "creation of ACL bindings", Role.ADMIN, _target, _create_plan, _create_run),
    ChangeAction(DELETE, "deletion of ACL bindings", Role.ADMIN, _target, _delete_plan, _delete_run),
)
