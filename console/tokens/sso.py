"""A person signed in with single sign-on may call the API and the MCP server with the access token their provider
gave them, where the provider answers its userinfo endpoint for it (most do; opaque tokens too): the provider,
not the console, says whether the token is valid. The account must exist (its first sign-in is in the browser,
where the console checks the id token); the role claim in the provider's answer, when it carries one, is the
ceiling of the account's role, so a role the provider took away is gone from the API at once."""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass

import requests
from django.conf import settings

from console.accounts.models import SsoIdentity
from console.accounts.roles import Role
from console.accounts.sso import claim_values, parse_role_map, role_for
from console.errors import ConsoleError
from console.tokens.errors import TokenRefused

MSG_PROVIDER_REFUSED = "The single sign-on provider did not accept this access token (HTTP {status})."
MSG_PROVIDER_DOWN = "The single sign-on provider did not answer about this access token: {detail}"
MSG_NO_SUBJECT = "The single sign-on provider's answer names no subject (sub) for this access token."
MSG_NO_ACCOUNT = ("Nobody signed in to the console with single sign-on as this person yet: sign in once in the "
                  "browser, then the access token works here too.")
MSG_ACCOUNT_OFF = "The console account of this person ({user}) is deactivated."
MSG_NO_ROLE = "The single sign-on provider gives this person no role of the console ({claim}: {values})."
SSO_TOKEN_NAME = "single sign-on access token"
CACHE_MAX = 1000


class SsoProviderDown(ConsoleError):
    status = 503


@dataclass(frozen=True)
class SsoGrant:
    """What a provider's access token may reach: every cluster, and changes as the person's role allows; it cannot
    execute a change through MCP (that needs a console token made with that permission)."""

    clusters: tuple[str, ...] = ()
    read_only: bool = False
    mcp_execute: bool = False

    def reaches(self, cluster: str) -> bool:
        return True


@dataclass(frozen=True)
class SsoCaller:
    user_id: int
    ceiling: Role | None
    until: float


_known: dict[str, SsoCaller] = {}
_known_lock = threading.Lock()


def access_token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def sso_caller(secret: str) -> SsoCaller:
    """Who the provider says holds `secret` (single sign-on on), asked at most once every API_SSO_TOKEN_CACHE_S per
    token and process."""
    digest, now = access_token_digest(secret), time.monotonic()
    with _known_lock:
        known = _known.get(digest)
    if known is not None and known.until > now:
        return known
    claims = _userinfo(secret)
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise TokenRefused(MSG_NO_SUBJECT)
    identity = (SsoIdentity.objects.select_related("user")
                .filter(issuer=settings.OIDC_OP_ISSUER, subject=subject).first())
    if identity is None:
        raise TokenRefused(MSG_NO_ACCOUNT)
    if not identity.user.is_active:
        raise TokenRefused(MSG_ACCOUNT_OFF.format(user=identity.user.get_username()))
    ceiling = None
    if settings.CONSOLE_SSO_ROLE_CLAIM in claims:
        values = claim_values(claims, settings.CONSOLE_SSO_ROLE_CLAIM)
        ceiling = role_for(values, parse_role_map(settings.CONSOLE_SSO_ROLE_MAP))
        if ceiling is None:
            raise TokenRefused(MSG_NO_ROLE.format(claim=settings.CONSOLE_SSO_ROLE_CLAIM,
                                                     values=", ".join(values) or "none"))
    caller = SsoCaller(user_id=identity.user.pk, ceiling=ceiling, until=now + settings.API_SSO_TOKEN_CACHE_S)
    with _known_lock:
        if len(_known) >= CACHE_MAX:
            for stale in sorted(_known, key=lambda d: _known[d].until)[:CACHE_MAX // 4]:
                del _known[stale]
        _known[digest] = caller
    return caller


def _userinfo(secret: str) -> dict:
    try:
        answer = requests.get(settings.OIDC_OP_USER_ENDPOINT, headers={"Authorization": f"Bearer {secret}"},
                              timeout=settings.OIDC_TIMEOUT, allow_redirects=False)
    except requests.RequestException as exc:
        raise SsoProviderDown(MSG_PROVIDER_DOWN.format(detail=type(exc).__name__)) from exc
    if answer.status_code != 200:
        raise TokenRefused(MSG_PROVIDER_REFUSED.format(status=answer.status_code))
    try:
        claims = answer.json()
    except ValueError as exc:
        raise SsoProviderDown(MSG_PROVIDER_DOWN.format(detail="an answer that is not JSON")) from exc
    if not isinstance(claims, dict):
        raise SsoProviderDown(MSG_PROVIDER_DOWN.format(detail="an answer that is not a JSON object"))
    return claims


def forget_sso_callers() -> None:
    with _known_lock:
        _known.clear()
