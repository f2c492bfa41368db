"""Three roles, each a Django group; a higher role includes every lower one."""

from __future__ import annotations

from enum import IntEnum

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from console.errors import PermissionRefused


class Role(IntEnum):
    VIEWER = 1
    OPERATOR = 2
    ADMIN = 3

    @property
    def group_name(self) -> str:
        return self.name.lower()


MSG_ROLE_REQUIRED = "This needs the {required} role; {who} has {current}."
# An API token acts as its owner with the role it was given as a ceiling (console/tokens/auth.py sets this attribute
# on the owner's user object of that request), so every check and masking rule sees the lower of the two.
ROLE_CEILING = "console_role_ceiling"
ROLE_SET_ACTION = "account.role.set"  # the audit action of every change of who holds which role


def user_role(user: AbstractBaseUser | AnonymousUser | None) -> Role | None:
    """The highest role the user holds; superusers are admins; inactive or anonymous users hold none."""
    if user is None or not user.is_authenticated or not user.is_active:
        return None
    ceiling = getattr(user, ROLE_CEILING, None)
    if user.is_superuser:
        return Role.ADMIN if ceiling is None else min(Role.ADMIN, ceiling)
    names = set(user.groups.values_list("name", flat=True))
    held = [role for role in Role if role.group_name in names]
    if not held:
        return None
    return max(held) if ceiling is None else min(max(held), ceiling)


def has_role(user, role: Role) -> bool:
    current = user_role(user)
    return current is not None and current >= role


def require_role(user, role: Role) -> None:
    """Raises PermissionRefused unless `user` holds `role` or higher. Used by views and commands alike."""
    if has_role(user, role):
        return
    current = user_role(user)
    who = getattr(user, "username", "") or "an anonymous user"
    raise PermissionRefused(
        MSG_ROLE_REQUIRED.format(required=role.group_name, who=who, current=current.group_name if current else "no role")
    )


def role_state(user) -> dict:
    """What decides a user's role, as the audit records it before and after a change."""
    role = user_role(user)
    return {"role": role.group_name if role else None, "superuser": user.is_superuser, "staff": user.is_staff,
            "active": user.is_active}
