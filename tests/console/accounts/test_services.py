"""user_role_set: admins only, audited with before and after, never leaves the console without an admin."""

import pytest
from django.contrib.auth.models import Group

from console.accounts.models import SsoIdentity
from console.accounts.roles import ROLE_SET_ACTION, Role, user_role
from console.accounts.services import MSG_LAST_ADMIN, MSG_SSO_MANAGED, MSG_UNKNOWN_USER, user_role_set
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.errors import Conflict, NotFound, PermissionRefused

pytestmark = pytest.mark.django_db


def _web(user) -> Actor:
    return Actor(user=user, source="web")


def test_an_admin_grants_a_role_and_the_audit_has_before_and_after(admin, viewer):
    after = user_role_set(actor=_web(admin), username="vera", role=Role.OPERATOR, reason="on call from Monday")

    viewer.refresh_from_db()
    assert user_role(viewer) == Role.OPERATOR and after["role"] == "operator"
    assert set(viewer.groups.values_list("name", flat=True)) == {"operator"}  # the viewer group went
    intent, success = AuditEvent.objects.filter(action=ROLE_SET_ACTION).order_by("seq")
    assert (intent.outcome, success.outcome) == ("intent", "success")
    assert success.before["role"] == "viewer" and success.after["role"] == "operator"
    assert (success.actor_name, success.target, success.reason) == ("ada", "user:vera", "on call from Monday")


def test_no_role_takes_every_role_away(admin, operator):
    user_role_set(actor=_web(admin), username="otto", role=None, reason="left the team")

    assert user_role(operator) is None
    assert AuditEvent.objects.get(action=ROLE_SET_ACTION, outcome="success").after["role"] is None


@pytest.mark.parametrize("fixture", ["viewer", "operator"])
def test_only_admins_may_set_roles(request, fixture, admin):
    actor = request.getfixturevalue(fixture)

    with pytest.raises(PermissionRefused, match="needs the admin role"):
        user_role_set(actor=_web(actor), username=actor.username, role=Role.ADMIN, reason="promote myself")
    assert user_role(actor) != Role.ADMIN and not AuditEvent.objects.exists()


def test_the_last_admin_cannot_be_demoted_and_the_refusal_is_audited(admin):
    with pytest.raises(Conflict) as refused:
        user_role_set(actor=_web(admin), username="ada", role=Role.VIEWER, reason="oops")

    assert refused.value.message == MSG_LAST_ADMIN.format(username="ada")
    assert user_role(admin) == Role.ADMIN
    event = AuditEvent.objects.get(action=ROLE_SET_ACTION)
    assert event.outcome == "refused" and event.error == MSG_LAST_ADMIN.format(username="ada")


def test_an_inactive_admin_does_not_count_as_another_admin(admin, make_user):
    dormant = make_user("dora", "admin")
    dormant.is_active = False
    dormant.save()

    with pytest.raises(Conflict):
        user_role_set(actor=_web(admin), username="ada", role=None, reason="x")
    user_role_set(actor=_web(admin), username="dora", role=None, reason="tidy up")  # demoting her is fine


def test_with_a_second_admin_an_admin_may_step_down(admin, make_user):
    make_user("bob", "admin")

    user_role_set(actor=_web(admin), username="ada", role=Role.OPERATOR, reason="handing over")

    assert user_role(admin) == Role.OPERATOR


def test_a_superuser_given_a_lower_role_stops_being_one(admin, django_user_model):
    root = django_user_model.objects.create_superuser("root", password="x")

    user_role_set(actor=_web(admin), username="root", role=Role.VIEWER, reason="no more root")

    root.refresh_from_db()
    assert not root.is_superuser and user_role(root) == Role.VIEWER
    event = AuditEvent.objects.get(action=ROLE_SET_ACTION, outcome="success")
    assert event.before["superuser"] is True and event.after == {**event.after, "superuser": False, "role": "viewer"}


def test_unknown_users_and_sso_users_are_refused(admin, django_user_model):
    with pytest.raises(NotFound, match="no user named"):
        user_role_set(actor=_web(admin), username="ghost", role=Role.VIEWER)
    sso_user = django_user_model.objects.create_user("sso:alice")
    sso_user.groups.add(Group.objects.get_or_create(name="viewer")[0])
    SsoIdentity.objects.create(user=sso_user, issuer="http://idp/corp", subject="alice")

    with pytest.raises(PermissionRefused) as refused:
        user_role_set(actor=_web(admin), username="sso:alice", role=Role.ADMIN, reason="x")
    assert refused.value.message == MSG_SSO_MANAGED.format(username="sso:alice")
    assert MSG_UNKNOWN_USER.format(username="ghost") == "There is no user named 'ghost'."
    assert user_role(sso_user) == Role.VIEWER
