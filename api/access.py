"""What an API operation asks of its caller before it calls a service or selector: the token may reach the
cluster (and change things, for a write), and its owner, with the token's role as a ceiling, holds the role the
page or the shell command asks for. Every refusal is audited; then the same code as the page's runs."""

from __future__ import annotations

from console.accounts.roles import Role, require_role
from console.audit.services import audit_refusal
from console.clusters.selectors import cluster_get
from console.errors import PermissionRefused
from console.tokens.auth import REFUSED_ACTION, TokenCall, token_scope_check


def call_of(request) -> TokenCall:
    return request.auth


def what(request) -> str:
    return f"{request.method} {request.path}"


def allow(request, *, role: Role = Role.VIEWER, cluster: str | None = None, write: bool = False) -> None:
    """Refuses (403, audited) unless the token reaches `cluster` (registered: 404 otherwise), may write when
    `write`, and its owner holds `role` under the token's ceiling."""
    call = call_of(request)
    token_scope_check(call, what=what(request), cluster=cluster, write=write)
    try:
        require_role(call.user, role)
    except PermissionRefused as exc:
        audit_refusal(actor=call.actor, action=REFUSED_ACTION, cluster=cluster or "", target=what(request)[:600],
                      reason="", params={"role": role.group_name}, error=exc.message)
        raise
    if cluster is not None:
        cluster_get(cluster)
