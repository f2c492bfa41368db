"""Reads about console accounts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model

from console.accounts.roles import Role, user_role


@dataclass(frozen=True)
class UserRoleRow:
    username: str
    role: Role | None
    superuser: bool
    active: bool
    sso: bool
    last_login: datetime | None

    @property
    def role_name(self) -> str:
        return self.role.group_name if self.role else ""

    def as_json(self) -> dict:
        return {"username": self.username, "role": self.role_name or None, "superuser": self.superuser,
                "active": self.active, "sso": self.sso,
                "last_login": self.last_login.isoformat() if self.last_login else None}


def user_roles_list() -> list[UserRoleRow]:
    """Every account with the role it holds now (inactive accounts hold none), by username."""
    users = get_user_model().objects.order_by("username").prefetch_related("groups").select_related("sso_identity")
    return [UserRoleRow(username=u.get_username(), role=user_role(u), superuser=u.is_superuser, active=u.is_active,
                        sso=hasattr(u, "sso_identity"), last_login=u.last_login) for u in users]
