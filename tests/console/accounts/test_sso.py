"""Single sign-on against a real OpenID Connect provider the session starts (devstack.identity): the
provider's login page, its signed tokens and its logout, through mozilla-django-oidc and the console's backend."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from console.accounts.models import SsoIdentity
from console.accounts.roles import Role, user_role
from console.audit.models import AuditEvent

pytestmark = [pytest.mark.django_db]


def sso_login(client, username: str, claims: dict, *, next_url: str = "/clusters/"):
    """What a browser does: the console sends it to the provider, the person signs in there, the provider sends
    it back with a code, and the console (server to server) redeems the code and reads the user's claims."""
    start = client.get("/accounts/oidc/authenticate/", {"next": next_url})
    assert start.status_code == 302, start.content
    signed_in = requests.post(start.headers["Location"], timeout=10, allow_redirects=False,
                              data={"username": username, "claims": json.dumps(claims)})
    assert signed_in.status_code == 302, signed_in.text
    back = urlsplit(signed_in.headers["Location"])
    assert back.path == "/accounts/oidc/callback/"
    return client.get(back.path, {k: v[0] for k, v in parse_qs(back.query).items()})


def _user(django_user_model, name: str):
    return django_user_model.objects.get(username=name)


def test_login_maps_the_group_claim_to_a_role_at_every_login(sso, client, django_user_model):
    arrived = sso_login(client, "alice", {"preferred_username": "alice", "email": "alice@corp.example",
                                          "groups": ["staff", "kafka-admins"]})
    assert arrived.status_code == 302 and arrived.headers["Location"] == "/clusters/"
    alice = _user(django_user_model, "sso:alice")
    assert user_role(alice) == Role.ADMIN and alice.email == "alice@corp.example"
    assert not alice.has_usable_password()
    identity = SsoIdentity.objects.get(user=alice)
    assert (identity.issuer, identity.subject) == (sso.issuer, "alice")
    page = client.get("/clusters/").content.decode()
    assert "sso:alice · admin" in page

    client.post("/accounts/logout/")
    sso_login(client, "alice", {"preferred_username": "alice", "groups": ["staff"]})
    assert user_role(_user(django_user_model, "sso:alice")) == Role.VIEWER  # re-evaluated: no longer an admin
    assert django_user_model.objects.filter(username__startswith="sso:alice").count() == 1
    # Both are changes of who may do what: the account made with its role, then the role the provider took away.
    made = AuditEvent.objects.get(action="account.create", target="user:sso:alice")
    assert made.before is None and made.after["role"] == "admin" and made.params["via"] == "sso-login"
    demoted = AuditEvent.objects.get(action="account.role.set", target="user:sso:alice")
    assert (demoted.before["role"], demoted.after["role"]) == ("admin", "viewer")
    client.post("/accounts/logout/")
    sso_login(client, "alice", {"preferred_username": "alice", "groups": ["staff"]})
    assert AuditEvent.objects.filter(target="user:sso:alice").count() == 2  # the same role again: no event


def test_someone_whose_groups_map_to_nothing_is_refused_with_the_reason(sso, client, django_user_model):
    refused = sso_login(client, "mallory", {"groups": ["finance", "<b>x</b>"]})
    assert refused.status_code == 302 and refused.headers["Location"] == "/accounts/login/"
    page = client.get("/accounts/login/").content.decode()
    assert "holds none of the groups or roles this console maps to a role" in page
    assert "finance, &lt;b&gt;x&lt;/b&gt;" in page and "kafka-admins, kafka-oncall, staff" in page
    assert not django_user_model.objects.filter(username__startswith="sso:mallory").exists()
    assert client.get("/clusters/").status_code == 302  # still logged out


def test_the_audit_names_the_sso_identity(sso, client, local_cluster):
    sso_login(client, "oncall.bob", {"groups": ["kafka-admins"]})
    response = client.post("/clusters/local/access/acls/create/", {
        "principal": "User:svc-sso", "resource_type": "GROUP", "resource_name": "billing", "pattern_type": "LITERAL",
        "operations": ["READ"], "permission": "ALLOW", "host": "*", "reason": "via SSO"})
    assert response.status_code == 302
    event = AuditEvent.objects.get(action="acl.create", outcome="success")
    assert event.actor_name == "sso:oncall.bob" and event.source == "web"


def test_logout_ends_the_providers_session_too(sso, client):
    sso_login(client, "carol", {"groups": ["kafka-oncall"]})
    left = client.post("/accounts/logout/")
    assert left.status_code == 302
    target = urlsplit(left.headers["Location"])
    assert f"{target.scheme}://{target.netloc}{target.path}" == sso.endpoints()["OIDC_OP_LOGOUT_ENDPOINT"]
    query = parse_qs(target.query)
    assert query["post_logout_redirect_uri"] == ["http://testserver/accounts/login/"] and query["id_token_hint"]
    assert client.get("/clusters/").status_code == 302
    back = requests.get(left.headers["Location"], timeout=10, allow_redirects=False)
    assert back.status_code == 302 and back.headers["Location"].startswith("http://testserver/accounts/login/")


def test_local_accounts_can_be_switched_off(sso, settings, client, admin):
    page = client.get("/accounts/login/").content.decode()
    assert "Log in with Corp SSO" in page and 'name="password"' in page  # break-glass beside SSO by default
    assert client.post("/accounts/login/", {"username": admin.username, "password": "pw-ada"}).status_code == 302

    client.post("/accounts/logout/")
    settings.CONSOLE_LOCAL_LOGIN = False
    settings.AUTHENTICATION_BACKENDS = [b for b in settings.AUTHENTICATION_BACKENDS if not b.endswith("ModelBackend")]
    page = client.get("/accounts/login/").content.decode()
    assert "Log in with Corp SSO" in page and 'name="password"' not in page
    refused = client.post("/accounts/login/", {"username": admin.username, "password": "pw-ada"})
    assert refused.status_code == 403 and "Local accounts are switched off here" in refused.content.decode()
    assert client.get("/clusters/").status_code == 302
