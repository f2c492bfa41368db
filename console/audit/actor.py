from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser

NAME_LENGTH = 150  # AuditEvent.actor_name's column


@dataclass(frozen=True)
class TokenRef:
    """The API token a program acted with (console/tokens): its row's id and the name its owner gave it; no id for
    a single sign-on access token (console/tokens/sso.py), which the console does not keep."""

    id: int | None
    name: str


@dataclass(frozen=True)
class Actor:
    """Who acts and from where; every mutating service takes one as `actor=`. A program calling the API or the MCP
    server acts as the token's owner (`user`, with the token's role as its ceiling) and names the token too."""

    user: AbstractBaseUser | None
    source: str  # web, cli, api, mcp or system
    remote_addr: str | None = None
    token: TokenRef | None = None

    @property
    def name(self) -> str:
        who = self.user.get_username() if self.user is not None else self.source
        if self.token is None:
            return who
        # Cut to the column's length; the audit row's params keep the token whole (console/audit/services.py).
        label = self.token.name if self.token.id is None else f"token #{self.token.id} {self.token.name}"
        return f"{who} ({label})"[:NAME_LENGTH]

    @classmethod
    def system(cls) -> Actor:
        return cls(user=None, source="system")

    @classmethod
    def from_request(cls, request) -> Actor:
        """The person of a page, or the token of an API call (console/tokens/auth.py sets `request.api_actor`)."""
        token_actor = getattr(request, "api_actor", None)
        if token_actor is not None:
            return token_actor
        return cls(user=request.user, source="web", remote_addr=request.META.get("REMOTE_ADDR") or None)
