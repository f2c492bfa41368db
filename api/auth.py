"""The API's security scheme: a bearer token (console/tokens), nothing else; a session cookie does not count."""

from __future__ import annotations

from ninja.security import HttpBearer

from console.audit.models import AuditEvent
from console.tokens.auth import TokenCall, token_authenticate


class ApiToken(HttpBearer):
    """`Authorization: Bearer kc_…`: the token's owner acts, with the token's role as the ceiling of theirs."""

    def authenticate(self, request, token: str) -> TokenCall:
        call = token_authenticate(token, source=AuditEvent.Source.API,
                                  remote_addr=request.META.get("REMOTE_ADDR") or None)
        # The page's code reads these: the services' actor, and the user every role check and masking rule reads.
        request.user, request.api_actor = call.user, call.actor
        return call
