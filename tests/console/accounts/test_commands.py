"""manage.py roles: the same service as the page, with the actor from --actor."""

import json

import pytest
from django.core.management import CommandError, call_command

from console.accounts.roles import ROLE_SET_ACTION, Role, user_role
from console.audit.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_list_shows_every_account_and_its_role(admin, viewer, make_user, capsys):
    make_user("nobody", None)

    call_command("roles", "list", "--format", "json")

    rows = {row["username"]: row["role"] for row in json.loads(capsys.readouterr().out)}
    assert rows == {"ada": "admin", "vera": "viewer", "nobody": None}


def test_set_is_audited_as_the_named_actor_from_the_shell(admin, viewer, capsys):
    call_command("roles", "set", "vera", "admin", "--actor", "ada", "--reason", "second admin")

    assert user_role(viewer) == Role.ADMIN and "vera now holds admin" in capsys.readouterr().out
    event = AuditEvent.objects.get(action=ROLE_SET_ACTION, outcome="success")
    assert (event.source, event.actor_name, event.before["role"], event.after["role"]) == ("cli", "ada", "viewer", "admin")


def test_set_refuses_a_non_admin_actor_a_missing_reason_and_the_last_admin(admin, operator):
    with pytest.raises(CommandError, match="needs the admin role; otto has operator"):
        call_command("roles", "set", "otto", "admin", "--actor", "otto", "--reason", "x")
    with pytest.raises(CommandError, match="--reason is required"):
        call_command("roles", "set", "otto", "viewer", "--actor", "ada")
    with pytest.raises(CommandError, match="ada is the last active admin"):
        call_command("roles", "set", "ada", "none", "--actor", "ada", "--reason", "x")
    with pytest.raises(CommandError, match="invalid choice: 'root'"):
        call_command("roles", "set", "otto", "root", "--actor", "ada", "--reason", "x")
    assert user_role(operator) == Role.OPERATOR and user_role(admin) == Role.ADMIN
