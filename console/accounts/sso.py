"""OpenID Connect login (mozilla-django-oidc): who a person is comes from the company's identity provider, and
which console role they hold from one of its claims, mapped by CONSOLE_SSO_ROLE_MAP and re-evaluated at every
login. Their console username is `sso:<name>`, so the audit says who acted by their SSO identity and no local
account (whose names cannot hold ':') is ever taken over."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import Group
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.utils import timezone
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from console.accounts.models import SsoIdentity
from console.accounts.roles import Role

log = logging.getLogger(__name__)
SSO_PREFIX = "sso:"
MSG_NO_ROLE = ("Your identity provider account ({who}) holds none of the groups or roles this console maps to a "
               "role ({claim}: {values}); ask for one of: {expected}.")
MSG_REFUSED = "Single sign-on did not complete: {detail}"


def parse_role_map(text: str) -> dict[str, Role]:
    """'kafka-admins=admin,kafka-ops=operator' -> {'kafka-admins': Role.ADMIN, ...}; a bad entry raises."""
    mapping: dict[str, Role] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        value, sep, role = item.rpartition("=")
        if not sep or not value.strip() or role.strip().upper() not in Role.__members__:
            raise ValueError(f"CONSOLE_SSO_ROLE_MAP entry {item!r} is not VALUE=viewer|operator|admin")
        mapping[value.strip()] = Role[role.strip().upper()]
    return mapping


def claim_values(claims: dict, path: str) -> list[str]:
    """The values at a dotted claim path ('groups', 'realm_access.roles'), as a list of strings."""
    found = claims
    for part in path.split("."):
        found = found.get(part) if isinstance(found, dict) else None
    if found is None:
        return []
    return [str(v) for v in found] if isinstance(found, (list, tuple)) else [str(found)]


def role_for(values: list[str], mapping: dict[str, Role]) -> Role | None:
    held = [mapping[v] for v in values if v in mapping]
    return max(held) if held else None


def token_mismatch(payload: dict, *, client_id: str, issuer: str) -> str | None:
    """Why an id token was not meant for us, or None. mozilla-django-oidc checks the signature and the nonce only."""
    audience = payload.get("aud")
    audiences = [audience] if isinstance(audience, str) else list(audience or [])
    if client_id not in audiences:
        return f"the id token was issued to {', '.join(map(str, audiences)) or 'no client'}, not to {client_id}"
    if issuer and payload.get("iss") != issuer:
        return f"the id token comes from issuer {payload.get('iss')!r}, not {issuer!r}"
    if not payload.get("sub"):
        return "the id token names no subject"
    return None


def sso_username(claims: dict) -> str:
    name = next((str(claims[k]) for k in (settings.CONSOLE_SSO_USERNAME_CLAIM, "preferred_username", "email", "sub")
                 if claims.get(k)), "")
    return (SSO_PREFIX + name)[:150]


class ConsoleOIDCBackend(OIDCAuthenticationBackend):
    def get_or_create_user(self, access_token, id_token, payload):
        mismatch = token_mismatch(payload, client_id=settings.OIDC_RP_CLIENT_ID, issuer=settings.OIDC_OP_ISSUER)
        if mismatch:
            self._refuse(MSG_REFUSED.format(detail=mismatch))
            return None
        # The id token holds iss and sub for certain; userinfo may add the group claim.
        claims = {**payload, **self.get_userinfo(access_token, id_token, payload)}
        if claims.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("userinfo is about another subject than the id token")
        values = claim_values(claims, settings.CONSOLE_SSO_ROLE_CLAIM)
        mapping = parse_role_map(settings.CONSOLE_SSO_ROLE_MAP)
        role = role_for(values, mapping)
        username = sso_username(claims)
        if role is None:
            self._refuse(MSG_NO_ROLE.format(who=username[len(SSO_PREFIX):], claim=settings.CONSOLE_SSO_ROLE_CLAIM,
                                            values=", ".join(values) or "none", expected=", ".join(mapping)))
            return None
        with transaction.atomic():
            identity = (SsoIdentity.objects.select_related("user")
                        .filter(issuer=payload.get("iss", ""), subject=payload["sub"]).first())
            if identity is None:
                user = self.UserModel.objects.create_user(self._free_username(username), email=claims.get("email", ""))
                user.set_unusable_password()
                user.save(update_fields=["password"])
                identity = SsoIdentity(user=user, issuer=payload.get("iss", ""), subject=payload["sub"])
            user = identity.user
            if not user.is_active:
                self._refuse("this console account is deactivated.")
                return None
            user.email = claims.get("email", "") or user.email
            user.save(update_fields=["email"])
            user.groups.remove(*Group.objects.filter(name__in=[r.group_name for r in Role]))
            user.groups.add(Group.objects.get_or_create(name=role.group_name)[0])
            identity.email, identity.role_claims, identity.last_login_at = claims.get("email", ""), values, timezone.now()
            identity.save()
        log.info("SSO login of %s (%s %s) as %s", user.get_username(), identity.issuer, identity.subject,
                 role.group_name)
        return user

    def _free_username(self, wanted: str) -> str:
        """Two identities with one display name (e.g. from two issuers) get distinct usernames."""
        candidate, n = wanted, 1
        while self.UserModel.objects.filter(username=candidate).exists():
            n += 1
            candidate = f"{wanted[:145]}~{n}"
        return candidate

    def _refuse(self, message: str) -> None:
        log.warning("SSO login refused: %s", message)
        messages.error(self.request, message)
