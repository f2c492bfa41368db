"""OpenID Connect login (mozilla-django-oidc): who a person is comes from the company's identity provider, and
which console role they hold from one of its claims, mapped by CONSOLE_SSO_ROLE_MAP and re-evaluated at every
login. Their console username is `sso:<name>`, so the audit says who acted by their SSO identity and no local
account (whose names cannot hold ':') is ever taken over."""

from __future__ import annotations

import logging
import time

import jwt
import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import Group
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.utils import timezone
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from console.accounts.models import SsoIdentity
from console.accounts.roles import ROLE_SET_ACTION, Role, role_state, user_role
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.services import audit_record, audited

log = logging.getLogger(__name__)
SSO_PREFIX = "sso:"
SSO_ACCOUNT_ACTION = "account.create"  # an account the identity provider's first login made, with its role
MSG_NO_ROLE = ("Your identity provider account ({who}) holds none of the groups or roles this console maps to a "
               "role ({claim}: {values}); ask for one of: {expected}.")
MSG_REFUSED = "Single sign-on did not complete: {detail}"
MSG_SESSION_ENDED = "Your single sign-on session ended: {detail}. Log in again."
MSG_RECHECK_REFUSED = "the identity provider no longer accepts it"
MSG_RECHECK_UNREACHABLE = "the identity provider could not confirm it ({detail})"
MSG_RECHECK_OTHER = "the identity provider answered about another identity"
MSG_RECHECK_NO_ROLE = "your identity provider account no longer holds a group this console maps to a role"

# Session keys: when the claims were last confirmed (only SSO sessions carry it), and what confirms them again.
SESSION_CHECKED_AT = "sso_checked_at"
SESSION_REFRESH_TOKEN = "sso_refresh_token"
SESSION_ACCESS_TOKEN = "sso_access_token"


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


def provider_failure(exc: requests.RequestException) -> str:
    """Why a call to the provider failed, in words (never its body, which may echo what we sent)."""
    if isinstance(exc, requests.Timeout):
        return f"no answer within {settings.OIDC_TIMEOUT} s"
    if isinstance(exc, requests.ConnectionError):
        return "could not connect"
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"it answered HTTP {exc.response.status_code}"
    return type(exc).__name__


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
            before = None
            if identity is None:
                user = self.UserModel.objects.create_user(self._free_username(username), email=claims.get("email", ""))
                user.set_unusable_password()
                user.save(update_fields=["password"])
                identity = SsoIdentity(user=user, issuer=payload.get("iss", ""), subject=payload["sub"])
            else:
                before = role_state(identity.user)
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
            after = role_state(user)
            if before != after:  # a new account, or a role the provider changed since the last login
                audit_record(actor=Actor.system(), action=SSO_ACCOUNT_ACTION if before is None else ROLE_SET_ACTION,
                             outcome=AuditEvent.Outcome.SUCCESS, target=f"user:{user.get_username()}",
                             reason="single sign-on login", before=before, after=after,
                             params={"username": user.get_username(), "via": "sso-login", "issuer": identity.issuer,
                                     "subject": identity.subject, "claims": values})
        log.info("SSO login of %s (%s %s) as %s", user.get_username(), identity.issuer, identity.subject,
                 role.group_name)
        return user

    def get_token(self, payload):
        tokens = super().get_token(payload)
        self._refresh_token = tokens.get("refresh_token")
        return tokens

    def store_tokens(self, access_token, id_token):
        super().store_tokens(access_token, id_token)
        session = self.request.session
        session[SESSION_ACCESS_TOKEN], session[SESSION_CHECKED_AT] = access_token, time.time()
        session[SESSION_REFRESH_TOKEN] = getattr(self, "_refresh_token", None)

    def recheck(self, request) -> str | None:
        """Asks the provider about a signed-in SSO user again: a refresh-token grant (new tokens, with the claims as
        the provider holds them now), then userinfo. Applies a changed role (audited, the provider as the cause)
        and returns None, or returns why the session must end: the provider refuses the tokens, does not answer
        (the role could have been taken away meanwhile, so an unconfirmed session does not go on), names another
        subject, or maps to no role."""
        self.request, session, user = request, request.session, request.user
        identity = SsoIdentity.objects.filter(user=user).first()
        if identity is None:
            return MSG_RECHECK_OTHER
        refresh_token = session.get(SESSION_REFRESH_TOKEN)
        payload: dict = {}
        try:
            if refresh_token:
                tokens = self.get_token({"client_id": self.OIDC_RP_CLIENT_ID, "client_secret": self.OIDC_RP_CLIENT_SECRET,
                                         "grant_type": "refresh_token", "refresh_token": refresh_token})
                access_token, id_token = tokens.get("access_token"), tokens.get("id_token")
                if id_token:
                    # No nonce check: a nonce binds a login's code to its browser, and a refresh has neither.
                    payload = self.get_payload_data(id_token, self.retrieve_matching_jwk(id_token))
                    if token_mismatch(payload, client_id=settings.OIDC_RP_CLIENT_ID, issuer=settings.OIDC_OP_ISSUER):
                        return MSG_RECHECK_OTHER
            else:
                access_token, id_token, tokens = session.get(SESSION_ACCESS_TOKEN), None, {}
            if not access_token:
                return MSG_RECHECK_REFUSED
            claims = {**payload, **self.get_userinfo(access_token, id_token, payload)}
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if status in (400, 401, 403):  # invalid_grant, invalid_token: the provider ended this session
                return MSG_RECHECK_REFUSED
            return MSG_RECHECK_UNREACHABLE.format(detail=f"it answered HTTP {status}")
        except requests.RequestException as exc:
            return MSG_RECHECK_UNREACHABLE.format(detail=provider_failure(exc))
        except (SuspiciousOperation, jwt.PyJWTError, ValueError, KeyError) as exc:
            log.warning("SSO re-check of %s: unusable answer: %s", user.get_username(), exc)
            return MSG_RECHECK_OTHER
        if claims.get("sub") != identity.subject or (payload and payload.get("iss") != identity.issuer):
            return MSG_RECHECK_OTHER
        values = claim_values(claims, settings.CONSOLE_SSO_ROLE_CLAIM)
        role = role_for(values, parse_role_map(settings.CONSOLE_SSO_ROLE_MAP))
        if role is None:
            return MSG_RECHECK_NO_ROLE
        if role != user_role(user):
            self._apply_role(user, identity, role, values)
        session[SESSION_REFRESH_TOKEN] = tokens.get("refresh_token") or refresh_token
        session[SESSION_ACCESS_TOKEN], session[SESSION_CHECKED_AT] = access_token, time.time()
        if id_token:
            session["oidc_id_token"] = id_token
        return None

    @staticmethod
    def _apply_role(user, identity: SsoIdentity, role: Role, values: list[str]) -> None:
        username = user.get_username()
        with audited(actor=Actor.system(), action=ROLE_SET_ACTION, target=f"user:{username}",
                     reason="the identity provider's claims changed", before=role_state(user),
                     params={"username": username, "role": role.group_name, "via": "sso-recheck",
                             "claims": values}) as record:
            with transaction.atomic():
                user.groups.remove(*Group.objects.filter(name__in=[r.group_name for r in Role]))
                user.groups.add(Group.objects.get_or_create(name=role.group_name)[0])
                identity.role_claims = values
                identity.save(update_fields=["role_claims"])
            record.after = role_state(user)
        log.info("SSO re-check: %s now holds %s", username, role.group_name)

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
