"""ACLs, SCRAM users and client quotas: `manage.py acls` and `manage.py users`."""

from __future__ import annotations

from ninja import Query, Router, Schema, Status
from pydantic import Field

from access import selectors, services
from access.bindings import bindings_for, query_for
from access.serializers import acls_json, quotas_json, scram_users_json
from api.access import allow
from api.schemas import PROBLEMS, REASON
from changes.actions import access as acl_changes
from changes.proposals import propose_if_protected
from changes.serializers import change_json
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.errors import ConsoleError

router = Router(tags=["access"])
MSG_DELETE_NEEDS_FILTER = "Name at least a principal or a resource: a delete never matches every binding."


class AclFilter(Schema):
    principal: str = Field("", description="Type:name, e.g. User:alice")
    resource_type: str = ""
    resource_name: str = Field("", description="without pattern_type: every binding that applies to this name")
    pattern_type: str = Field("", description="LITERAL, PREFIXED, ANY or MATCH")
    operation: str = ""
    permission: str = ""
    host: str = ""


def _query(f: AclFilter):
    return query_for(principal=f.principal, resource_type=f.resource_type, resource_name=f.resource_name,
                     pattern_type=f.pattern_type, operation=f.operation, permission=f.permission, host=f.host)


@router.get("/clusters/{cluster}/acls", response={200: list[dict], **PROBLEMS}, summary="List ACLs")
def acl_list(request, cluster: str, query: Query[AclFilter]):
    """`manage.py acls list --format json`: the bindings matching the filter (all without one)."""
    allow(request, cluster=cluster)
    return acls_json(selectors.acls_list(cluster, _query(query)))


class AclCreate(Schema):
    principal: str
    resource_type: str
    resource_name: str = Field("", description="* for every resource of the type")
    pattern_type: str = "LITERAL"
    operations: list[str] = Field(min_length=1)
    permission: str = "ALLOW"
    host: str = Field("*", description="*, one IP address, or a CIDR range such as 10.0.0.0/8 (a cluster at "
                      "metadata.version 4.4-IV1 or later: Kafka 4.4)")
    reason: str = REASON


@router.post("/clusters/{cluster}/acls", response={201: list[dict], 202: dict, **PROBLEMS}, summary="Create ACLs")
def acl_create(request, cluster: str, body: AclCreate):
    """`manage.py acls add --confirm --format json` (admin): one binding per operation; answers those created. On
    a protected cluster: 202 and the change request made instead."""
    allow(request, role=Role.ADMIN, cluster=cluster, write=True)
    entries = bindings_for(principal=body.principal, resource_type=body.resource_type,
                           resource_name=body.resource_name, pattern_type=body.pattern_type,
                           operations=body.operations, permission=body.permission, host=body.host)
    asked = propose_if_protected(actor=Actor.from_request(request), action=acl_changes.CREATE, cluster=cluster,
                                 kwargs=acl_changes.acl_kwargs(entries), reason=body.reason)
    if asked is not None:
        return Status(202, change_json(asked))
    change = services.acls_create(actor=Actor.from_request(request), cluster=cluster, entries=entries,
                                  reason=body.reason)
    return Status(201, acls_json(change.changed))


class AclDelete(AclFilter):
    confirm: str = Field(description="how many bindings the filter matches (GET /acls with it first)")
    reason: str = REASON


@router.post("/clusters/{cluster}/acls/delete", response={200: list[dict], 202: dict, **PROBLEMS},
             summary="Delete ACLs")
def acl_delete(request, cluster: str, body: AclDelete):
    """`manage.py acls remove --confirm COUNT --format json` (admin): deletes exactly the bindings the filter matches
    now, confirmed by their count; answers those deleted. On a protected cluster: 202 and the change request made
    instead."""
    allow(request, role=Role.ADMIN, cluster=cluster, write=True)
    if not (body.principal or body.resource_type or body.resource_name):
        raise ConsoleError(MSG_DELETE_NEEDS_FILTER)
    matched = selectors.acls_list(cluster, _query(body))
    if matched and body.confirm.strip() == str(len(matched)):
        asked = propose_if_protected(actor=Actor.from_request(request), action=acl_changes.DELETE, cluster=cluster,
                                     kwargs=acl_changes.acl_kwargs(matched), reason=body.reason)
        if asked is not None:
            return Status(202, change_json(asked))
    deleted = services.acls_delete(actor=Actor.from_request(request), cluster=cluster, entries=matched,
                                   confirm=body.confirm, reason=body.reason)
    return acls_json(deleted)


@router.get("/clusters/{cluster}/users", response={200: list[dict], **PROBLEMS}, summary="List SCRAM users")
def user_list(request, cluster: str):
    """`manage.py users list --format json`: each user's mechanisms and iterations, never a secret."""
    allow(request, cluster=cluster)
    return scram_users_json(selectors.scram_users_list(cluster))


@router.get("/clusters/{cluster}/quotas", response={200: list[dict], **PROBLEMS}, summary="List client quotas")
def quota_list(request, cluster: str):
    """`manage.py users quotas --format json`."""
    allow(request, cluster=cluster)
    return quotas_json(selectors.client_quotas_list(cluster))
