"""Changes of who holds which role made in Django's admin are audited with the admin's user as the actor; the
admin itself is served only where CONSOLE_DJANGO_ADMIN is on (development by default)."""

import os
import subprocess
import sys

import pytest
from django.contrib.auth.models import Group

from console.accounts.roles import ROLE_SET_ACTION, Role, user_role
from console.audit.models import AuditEvent
from console.paths import PROJECT_DIR

pytestmark = pytest.mark.django_db


def _change_form(user, **changes) -> dict:
    data = {"username": user.username, "first_name": "", "last_name": "", "email": "",
            "is_active": "on", "last_login_0": "", "last_login_1": "",
            "date_joined_0": user.date_joined.strftime("%Y-%m-%d"), "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
            "initial-date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
            "initial-date_joined_1": user.date_joined.strftime("%H:%M:%S"),
            "groups": [str(g.pk) for g in user.groups.all()]}
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


@pytest.fixture
def root(django_user_model):
    return django_user_model.objects.create_superuser("root", password="pw-root")


def test_a_group_change_in_the_admin_is_audited_with_the_admins_user(client, root, viewer):
    client.force_login(root)
    admin_group = Group.objects.get_or_create(name="admin")[0]

    response = client.post(f"/admin/auth/user/{viewer.pk}/change/", _change_form(viewer, groups=[str(admin_group.pk)]))

    assert response.status_code == 302, response.content.decode()[:2000]
    assert user_role(viewer) == Role.ADMIN
    event = AuditEvent.objects.get(action=ROLE_SET_ACTION)
    assert (event.actor_name, event.source, event.target) == ("root", "web", "user:vera")
    assert event.before["role"] == "viewer" and event.after["role"] == "admin"
    assert event.params["via"] == "django-admin"


def test_a_superuser_flip_in_the_admin_is_audited(client, root, operator):
    client.force_login(root)

    client.post(f"/admin/auth/user/{operator.pk}/change/",
                _change_form(operator, is_superuser="on", is_staff="on"))

    event = AuditEvent.objects.get(action=ROLE_SET_ACTION)
    assert event.before == {"role": "operator", "superuser": False, "staff": False, "active": True}
    assert event.after == {"role": "admin", "superuser": True, "staff": True, "active": True}


def test_an_admin_save_that_changes_no_role_leaves_no_event(client, root, operator):
    client.force_login(root)

    client.post(f"/admin/auth/user/{operator.pk}/change/", _change_form(operator, email="otto@corp.example"))

    operator.refresh_from_db()
    assert operator.email == "otto@corp.example" and not AuditEvent.objects.exists()


def _resolves_admin(env_overrides: dict) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DJANGO_DEBUG", "CONSOLE_DJANGO_ADMIN")}
    env.update({"DJANGO_SETTINGS_MODULE": "console.settings", "DJANGO_ENV_FILE": "", "SECRET_KEY": "x" * 50,
                "AUDIT_HASH_KEY": "y" * 50, **env_overrides})
    code = ("import django; django.setup()\nfrom django.urls import Resolver404, resolve\n"
            "try:\n    resolve('/admin/'); print('served')\nexcept Resolver404:\n    print('absent')")
    result = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_DIR, env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_deleting_users_and_groups_in_the_admin_is_audited(client, root, viewer, operator):
    from console.accounts.admin import GROUP_CHANGE_ACTION, GROUP_DELETE_ACTION, USER_DELETE_ACTION

    client.force_login(root)
    assert client.post(f"/admin/auth/user/{viewer.pk}/delete/", {"post": "yes"}).status_code == 302
    deleted = AuditEvent.objects.get(action=USER_DELETE_ACTION)
    assert deleted.actor_name == "root" and deleted.target == f"user:{viewer.username}"
    assert deleted.before["role"] == "viewer"
    extra = Group.objects.create(name="on-call")
    operator.groups.add(extra)
    response = client.post("/admin/auth/group/", {"action": "delete_selected", "_selected_action": [str(extra.pk)],
                                                  "post": "yes"})
    assert response.status_code == 302 and not Group.objects.filter(name="on-call").exists()
    gone = AuditEvent.objects.get(action=GROUP_DELETE_ACTION)
    assert gone.before == {"name": "on-call", "members": [operator.username]}
    group = Group.objects.get_or_create(name="operator")[0]
    assert client.post(f"/admin/auth/group/{group.pk}/change/", {"name": "operators-renamed"}).status_code == 302
    renamed = AuditEvent.objects.get(action=GROUP_CHANGE_ACTION)
    assert (renamed.before, renamed.after) == ({"name": "operator"}, {"name": "operators-renamed"})


def test_djangos_admin_is_off_in_production_unless_asked_for():
    assert _resolves_admin({}) == "absent"
    assert _resolves_admin({"CONSOLE_DJANGO_ADMIN": "1"}) == "served"
    assert _resolves_admin({"DJANGO_DEBUG": "1"}) == "served"
