"""Who calls the API or the MCP server: the token a program presents, checked, rate-limited, and turned into the
owner acting with the token's role as a ceiling. What a token may reach (clusters, writes, executing previewed
changes) is checked here too, for both; every refusal is audited."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from console.accounts.roles import ROLE_CEILING, Role
from console.audit.actor import Actor, TokenRef
from console.audit.services import audit_refusal
from console.errors import PermissionRefused
from console.tokens.models import ApiToken
from console.tokens.errors import RateLimited, TokenRefused
from console.tokens.rate import rate_wait_s
from console.tokens.services import TOKEN_PREFIX, token_digest
from console.tokens.sso import SSO_TOKEN_NAME, SsoGrant, access_token_digest, sso_caller

REFUSED_ACTION = "token.refused"
LAST_USE_EVERY_S = 30  # the last-use columns are written at most this often per token
MSG_NO_TOKEN = "Send an API token in the Authorization header: 'Authorization: Bearer kc_…'."
MSG_UNKNOWN = "This API token is not known: it was never made here, or was mistyped."
MSG_REVOKED = "This API token was revoked at {when} by {who}."
MSG_EXPIRED = "This API token expired at {when}."
MSG_OWNER_GONE = "The owner of this API token ({owner}) is no longer an active user."
MSG_RATE = "This token made more than {limit} calls this minute; try again in {wait} s."
MSG_CLUSTER = "This token reaches only {clusters}, not '{cluster}'."
MSG_READ_ONLY = "This token is read-only: it cannot change anything."
MSG_NO_EXECUTE = ("This token may preview changes through MCP, not execute them: its owner did not allow "
                  "executing (a token setting).")


@dataclass(frozen=True)
class TokenCall:
    """One call made with a valid token: the token, its owner as it acts now (role ceiling set), and the actor the
    services audit."""

    token: ApiToken | SsoGrant  # what the call may reach: a console token's scope, or a provider's access token's
    user: object
    actor: Actor


def bearer_secret(header: str) -> str:
    scheme, _, secret = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise TokenRefused(MSG_NO_TOKEN)
    return secret.strip()


def token_authenticate(secret: str, *, source: str, remote_addr: str | None) -> TokenCall:
    """The call's token, if it is known, not revoked, not expired and its owner active; counted against the
    rate limit (429 past it). A secret that is not a console token may be a single sign-on access token
    (console/tokens/sso.py)."""
    if not secret.startswith(TOKEN_PREFIX):
        return _sso_authenticate(secret, source=source, remote_addr=remote_addr)
    token = ApiToken.objects.select_related("owner").filter(digest=token_digest(secret)).first()
    if token is None:
        raise TokenRefused(MSG_UNKNOWN)
    now = timezone.now()
    state = token.state(now)
    if state == "revoked":
        raise TokenRefused(MSG_REVOKED.format(when=token.revoked_at.isoformat(timespec="seconds"),
                                              who=token.revoked_by or "?"))
    if state == "expired":
        raise TokenRefused(MSG_EXPIRED.format(when=token.expires_at.isoformat(timespec="seconds")))
    user = get_user_model().objects.filter(pk=token.owner_id, is_active=True).first()
    if user is None:
        raise TokenRefused(MSG_OWNER_GONE.format(owner=token.owner.get_username()))
    setattr(user, ROLE_CEILING, Role(token.role))
    wait = rate_wait_s(token.digest[:20])
    if wait:
        raise RateLimited(MSG_RATE.format(limit=settings.API_RATE_LIMIT_PER_MINUTE, wait=wait), retry_after=wait)
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() >= LAST_USE_EVERY_S:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now, last_used_from=remote_addr)
    actor = Actor(user=user, source=source, remote_addr=remote_addr, token=TokenRef(token.pk, token.name))
    return TokenCall(token=token, user=user, actor=actor)


def _sso_authenticate(secret: str, *, source: str, remote_addr: str | None) -> TokenCall:
    if not settings.SSO_ENABLED:
        raise TokenRefused(MSG_UNKNOWN)
    caller = sso_caller(secret)
    user = get_user_model().objects.filter(pk=caller.user_id, is_active=True).first()
    if user is None:
        raise TokenRefused(MSG_UNKNOWN)
    if caller.ceiling is not None:
        setattr(user, ROLE_CEILING, caller.ceiling)
    wait = rate_wait_s("sso-" + access_token_digest(secret)[:16])
    if wait:
        raise RateLimited(MSG_RATE.format(limit=settings.API_RATE_LIMIT_PER_MINUTE, wait=wait), retry_after=wait)
    actor = Actor(user=user, source=source, remote_addr=remote_addr, token=TokenRef(None, SSO_TOKEN_NAME))
    return TokenCall(token=SsoGrant(), user=user, actor=actor)


def token_scope_check(call: TokenCall, *, what: str, cluster: str | None = None, write: bool = False,
                      execute: bool = False) -> None:
    """Refuses (403, audited) what the token may not do: a cluster it does not reach, a change with a read-only
    token, executing a previewed change through MCP without that permission. `what` names the call for the audit
    row (`GET /api/v1/...`, `mcp:tool`)."""
    token, message = call.token, ""
    if cluster is not None and not token.reaches(cluster):
        message = MSG_CLUSTER.format(clusters=", ".join(repr(c) for c in token.clusters), cluster=cluster)
    elif (write or execute) and token.read_only:
        message = MSG_READ_ONLY
    elif execute and not token.mcp_execute:
        message = MSG_NO_EXECUTE
    if message:
        audit_refusal(actor=call.actor, action=REFUSED_ACTION, cluster=cluster or "", target=what[:600], reason="",
                      params={"write": write, "execute": execute}, error=message)
        raise PermissionRefused(message)
