"""Granting and revoking console roles. Every change goes through `user_role_set`, from the page and the shell."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from console.accounts.roles import ROLE_SET_ACTION, Role, require_role, role_state, user_role
from console.accounts.sso import SSO_PREFIX
from console.audit.actor import Actor
from console.audit.services import audit_refusal, audited
from console.errors import Conflict, NotFound, PermissionRefused

MSG_UNKNOWN_USER = "There is no user named '{username}'."
MSG_LAST_ADMIN = ("{username} is the last active admin: give someone else the admin role first, or nobody could "
                  "grant roles any more (except from the shell with a superuser).")
MSG_SSO_MANAGED = ("{username} signs in through single sign-on, whose claims set the role at every login and "
                   "re-check; change the groups at the identity provider instead.")


def _other_admins(user) -> int:
    others = get_user_model().objects.filter(is_active=True).exclude(pk=user.pk)
    return sum(1 for other in others.prefetch_related("groups") if user_role(other) == Role.ADMIN)


def user_role_set(*, actor: Actor, username: str, role: Role | None, reason: str = "") -> dict:
    """Makes `role` (or none) the user's only role group. A superuser given a lower role stops being one, or the
    change would be a lie (superusers are admins whatever their groups). Returns the state after the change."""
    require_role(actor.user, Role.ADMIN)
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(MSG_UNKNOWN_USER.format(username=username))
    target, params = f"user:{username}", {"username": username, "role": role.group_name if role else None}
    refusal = None
    if username.startswith(SSO_PREFIX) and hasattr(user, "sso_identity"):
        refusal = PermissionRefused(MSG_SSO_MANAGED.format(username=username))
    elif user_role(user) == Role.ADMIN and role != Role.ADMIN and not _other_admins(user):
        refusal = Conflict(MSG_LAST_ADMIN.format(username=username))
    if refusal is not None:
        audit_refusal(actor=actor, action=ROLE_SET_ACTION, cluster="", target=target, reason=reason, params=params,
                      error=refusal.message)
        raise refusal
    with audited(actor=actor, action=ROLE_SET_ACTION, target=target, reason=reason, params=params,
                 before=role_state(user)) as record:
        with transaction.atomic():
            # Asked again under the write lock: two admins demoting each other at once must not both succeed.
            if role != Role.ADMIN and user_role(user) == Role.ADMIN and not _other_admins(user):
                raise Conflict(MSG_LAST_ADMIN.format(username=username))
            user.groups.remove(*Group.objects.filter(name__in=[r.group_name for r in Role]))
            if role is not None:
                user.groups.add(Group.objects.get_or_create(name=role.group_name)[0])
            if role != Role.ADMIN and user.is_superuser:
                user.is_superuser = False
                user.save(update_fields=["is_superuser"])
        record.after = role_state(user)
    return record.after
