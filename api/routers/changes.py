"""Four-eyes change requests: list, show, approve, reject, break-glass, with the pages' and the shell's role rules
(the change's own role to approve or reject, admin to break the glass; never one's own approval). A change asked
of the API on a protected target (a reset, a topic's deletion or config change) answers 202 with the request it
made instead of running."""

from __future__ import annotations

from typing import Literal

from ninja import Query, Router, Schema
from pydantic import Field

from api.access import allow, call_of
from api.pagination import page_after
from api.schemas import PROBLEMS, REASON, Page, limit_field
from changes import selectors, services, states
from changes.serializers import change_json
from console.accounts.roles import Role
from console.audit.actor import Actor

router = Router(tags=["change requests"])


class ChangeListQuery(Schema):
    status: Literal[tuple(["all", *states.STATUSES])] = Field("pending", description="pending: still waiting now")
    cluster: str = Field("", description="only this cluster's")
    cursor: str | None = None
    limit: int = limit_field()


@router.get("/changes", response={200: Page, **PROBLEMS}, summary="List change requests")
def change_list(request, query: Query[ChangeListQuery]):
    """`manage.py changes list --format json`, newest first, a page at a time. A token limited to some clusters
    sees their requests only."""
    allow(request, cluster=query.cluster or None)
    rows = selectors.change_requests(status="" if query.status == "all" else query.status, cluster=query.cluster,
                                     limit=10_000)
    reach = call_of(request).token.clusters
    if reach:
        rows = [c for c in rows if c.cluster in reach]
    return page_after([change_json(c, plan=False) for c in rows], key=lambda c: -c["id"], cursor=query.cursor,
                      limit=query.limit)


def _readable(request, change_id: int):
    change = services.change_request_get(change_id)
    allow(request, cluster=change.cluster)
    return change


@router.get("/changes/{change_id}", response={200: dict, **PROBLEMS}, summary="Show a change request")
def change_show(request, change_id: int):
    """`manage.py changes show --format json`: the plan as previewed, its fingerprint, the approvals."""
    return change_json(_readable(request, change_id))


class Approval(Schema):
    reason: str = Field("", max_length=2000, description="a comment, kept in the audit log")


class Decision(Schema):
    reason: str = REASON


@router.post("/changes/{change_id}/approve", response={200: dict, **PROBLEMS}, summary="Approve a change request")
def change_approve(request, change_id: int, body: Approval):
    """`manage.py changes approve` (the change's role; never the requester): the last approval needed executes the
    change as the approver, refused (409) as stale if its plan moved since it was asked for."""
    change = _readable(request, change_id)
    allow(request, role=Role.OPERATOR, cluster=change.cluster, write=True)
    return change_json(services.change_request_approve(actor=Actor.from_request(request), request_id=change_id,
                                                       reason=body.reason))


@router.post("/changes/{change_id}/reject", response={200: dict, **PROBLEMS}, summary="Reject a change request")
def change_reject(request, change_id: int, body: Decision):
    """`manage.py changes reject` (the change's role, or the requester withdrawing): nothing is changed."""
    change = _readable(request, change_id)
    allow(request, role=Role.OPERATOR, cluster=change.cluster, write=True)
    return change_json(services.change_request_reject(actor=Actor.from_request(request), request_id=change_id,
                                                      reason=body.reason))


@router.post("/changes/{change_id}/break-glass", response={200: dict, **PROBLEMS},
             summary="Execute a change request without approval")
def change_break_glass(request, change_id: int, body: Decision):
    """`manage.py changes break-glass` (admin): runs it now, audited as break-glass and sent to the protection's
    channel."""
    change = _readable(request, change_id)
    allow(request, role=Role.ADMIN, cluster=change.cluster, write=True)
    return change_json(services.change_request_break_glass(actor=Actor.from_request(request), request_id=change_id,
                                                           reason=body.reason))
