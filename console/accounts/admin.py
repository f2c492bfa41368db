"""Django's admin can still change who holds which role (group membership, superuser, staff, active): such a
change is audited here as `account.role.set`, with the admin's request user as the actor. Done in the admin class
rather than in m2m/save signals because only here are the request (who) and the whole change (the user row,
then its groups) both at hand, so one change is one event with its before and after."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group

from console.accounts.roles import ROLE_SET_ACTION, role_state
from console.audit.actor import Actor
from console.audit.services import audit_record
from console.audit.models import AuditEvent

User = get_user_model()


class AuditedUserAdmin(UserAdmin):
    def save_model(self, request, obj, form, change):
        stored = User.objects.filter(pk=obj.pk).first() if change else None
        request._role_state_before = role_state(stored) if stored is not None else None
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)  # the groups are saved here
        user = form.instance
        before, after = getattr(request, "_role_state_before", None), role_state(User.objects.get(pk=user.pk))
        if before == after or (before is None and after["role"] is None and not after["staff"]):
            return
        audit_record(actor=Actor.from_request(request), action=ROLE_SET_ACTION, outcome=AuditEvent.Outcome.SUCCESS,
                     target=f"user:{user.get_username()}", params={"username": user.get_username(), "via": "django-admin"},
                     before=before, after=after)


    def delete_model(self, request, obj):
        _audit_user_deleted(request, obj)
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):  # the list's "delete selected"
        for user in queryset:
            _audit_user_deleted(request, user)
        super().delete_queryset(request, queryset)


USER_DELETE_ACTION = "account.delete"
GROUP_DELETE_ACTION = "account.group.delete"
GROUP_CHANGE_ACTION = "account.group.change"


def _audit_user_deleted(request, user) -> None:
    # Written before the row goes, so the event holds what the account was; a deletion that fails after it is
    # still an attempt worth the log.
    audit_record(actor=Actor.from_request(request), action=USER_DELETE_ACTION, outcome=AuditEvent.Outcome.SUCCESS,
                 target=f"user:{user.get_username()}", params={"username": user.get_username(), "via": "django-admin"},
                 before=role_state(user), after=None)


class AuditedGroupAdmin(GroupAdmin):
    """Groups are the roles: renaming or deleting one changes who holds a role, so either is audited."""

    def save_model(self, request, obj, form, change):
        before = Group.objects.filter(pk=obj.pk).values_list("name", flat=True).first() if change else None
        super().save_model(request, obj, form, change)
        if before != obj.name:
            audit_record(actor=Actor.from_request(request), action=GROUP_CHANGE_ACTION,
                         outcome=AuditEvent.Outcome.SUCCESS, target=f"group:{obj.name}",
                         params={"via": "django-admin"}, before={"name": before}, after={"name": obj.name})

    def delete_model(self, request, obj):
        _audit_group_deleted(request, obj)
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for group in queryset:
            _audit_group_deleted(request, group)
        super().delete_queryset(request, queryset)


def _audit_group_deleted(request, group) -> None:
    members = sorted(group.user_set.values_list("username", flat=True))
    audit_record(actor=Actor.from_request(request), action=GROUP_DELETE_ACTION, outcome=AuditEvent.Outcome.SUCCESS,
                 target=f"group:{group.name}", params={"via": "django-admin"},
                 before={"name": group.name, "members": members}, after=None)


if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, AuditedUserAdmin)
if admin.site.is_registered(Group):
    admin.site.unregister(Group)
admin.site.register(Group, AuditedGroupAdmin)
