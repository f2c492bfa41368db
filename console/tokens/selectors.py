"""Reads of API tokens: whose tokens a person sees, and which token a secret is."""

from __future__ import annotations

from django.db.models import QuerySet

from console.accounts.roles import Role, user_role
from console.tokens.models import ApiToken


def tokens_visible_to(user) -> QuerySet[ApiToken]:
    """A person's own tokens; an admin sees everyone's (to revoke a leaked one)."""
    tokens = ApiToken.objects.select_related("owner")
    return tokens if user_role(user) == Role.ADMIN else tokens.filter(owner=user)
