"""Making and revoking API tokens, from the tokens page and the shell alike; both audited."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.accounts.roles import Role, require_role, user_role
from console.audit.actor import Actor
from console.audit.services import audit_refusal, audited
from console.clusters.models import Cluster
from console.errors import ConsoleError, NotFound, PermissionRefused
from console.tokens.models import ApiToken

TOKEN_PREFIX = "kc_"
PREFIX_SHOWN = 10  # "kc_" and 7 characters of the secret: enough to tell tokens apart, nothing to guess with
CREATE_ACTION, REVOKE_ACTION = "token.create", "token.revoke"
MSG_NAME = "Give the token a name (up to 100 characters) that says what uses it."
MSG_ROLE_ABOVE = "A token's role cannot be above its creator's: {who} holds {held}, the token asked for {asked}."
MSG_EXPIRY = "A token lasts from 1 to {max} days."
MSG_UNKNOWN_CLUSTERS = "No cluster is registered as {names}."
MSG_EXECUTE_READ_ONLY = "A read-only token cannot also execute changes through MCP."
MSG_NOT_YOURS = "Only its owner or an admin can revoke token #{id}."
MSG_NO_TOKEN = "There is no token #{id}."
MSG_REVOKED_ALREADY = "Token #{id} is revoked already."


def token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _params(token: ApiToken) -> dict:
    return {"token": {"id": token.pk, "name": token.name}, "owner": token.owner.get_username(), "kind": token.kind,
            "role": Role(token.role).group_name, "clusters": token.clusters, "read_only": token.read_only,
            "mcp_execute": token.mcp_execute, "expires_at": token.expires_at.isoformat(), "prefix": token.prefix}


def token_create(*, actor: Actor, name: str, role: Role, expires_days: int, kind: str = ApiToken.Kind.PERSONAL,
                 clusters: list[str] | None = None, read_only: bool = False, mcp_execute: bool = False,
                 reason: str = "") -> tuple[ApiToken, str]:
    """A token owned by the actor, with a role no higher than the actor's own; returns it and its secret, which is
    shown this once and kept only as a digest."""
    require_role(actor.user, Role.VIEWER)
    name = name.strip()
    if not name or len(name) > 100 or any(ord(ch) < 32 for ch in name):
        raise ConsoleError(MSG_NAME, field="name")
    held = user_role(actor.user)
    if role > held:
        message = MSG_ROLE_ABOVE.format(who=actor.user.get_username(), held=held.group_name, asked=role.group_name)
        audit_refusal(actor=actor, action=CREATE_ACTION, cluster="", target=f"token:{name}", reason=reason,
                      params={"role": role.group_name}, error=message)
        raise PermissionRefused(message)
    if not 1 <= expires_days <= settings.API_TOKEN_MAX_DAYS:
        raise ConsoleError(MSG_EXPIRY.format(max=settings.API_TOKEN_MAX_DAYS), field="expires_days")
    clusters = sorted(set(clusters or []))
    unknown = sorted(set(clusters) - set(Cluster.objects.filter(name__in=clusters).values_list("name", flat=True)))
    if unknown:
        raise ConsoleError(MSG_UNKNOWN_CLUSTERS.format(names=", ".join(repr(n) for n in unknown)), field="clusters")
    if read_only and mcp_execute:
        raise ConsoleError(MSG_EXECUTE_READ_ONLY, field="mcp_execute")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with audited(actor=actor, action=CREATE_ACTION, target=f"token:{name}", reason=reason,
                 params={"name": name}) as record:
        now = timezone.now()
        token = ApiToken.objects.create(
            name=name, kind=kind, owner=actor.user, role=int(role), clusters=clusters, read_only=read_only,
            mcp_execute=mcp_execute, prefix=secret[:PREFIX_SHOWN], digest=token_digest(secret), created_at=now,
            expires_at=now + timedelta(days=expires_days))
        record.after = _params(token)
    return token, secret


def token_revoke(*, actor: Actor, token_id: int, reason: str = "") -> ApiToken:
    """Its owner or an admin ends a token now; the next call with it gets 401."""
    token = ApiToken.objects.select_related("owner").filter(pk=token_id).first()
    if token is None:
        raise NotFound(MSG_NO_TOKEN.format(id=token_id))
    if token.owner_id != getattr(actor.user, "pk", None) and user_role(actor.user) != Role.ADMIN:
        message = MSG_NOT_YOURS.format(id=token_id)
        audit_refusal(actor=actor, action=REVOKE_ACTION, cluster="", target=f"token:{token.name}", reason=reason,
                      params={"token": {"id": token.pk, "name": token.name}}, error=message)
        raise PermissionRefused(message)
    if token.revoked_at is not None:
        raise ConsoleError(MSG_REVOKED_ALREADY.format(id=token_id))
    with audited(actor=actor, action=REVOKE_ACTION, target=f"token:{token.name}", reason=reason,
                 before=_params(token)) as record:
        with transaction.atomic():
            ApiToken.objects.filter(pk=token.pk, revoked_at=None).update(revoked_at=timezone.now(),
                                                                         revoked_by=actor.name)
        token.refresh_from_db()
        record.after = {"revoked_at": token.revoked_at.isoformat(), "revoked_by": token.revoked_by}
    return token
