"""The roles page (admins only, CSRF, htmx partial, odd usernames escaped) and the SSO callback with the provider
down (a clear page within seconds, never a server error)."""

import time

import pytest
from django.test import Client
from hypothesis import given, settings as hyp_settings, strategies as st

from console.accounts.forms import RoleSetForm
from console.accounts.roles import ROLE_SET_ACTION, Role, user_role
from console.audit.models import AuditEvent

pytestmark = pytest.mark.django_db

ODD_NAMES = ["<script>alert(1)</script>", 'a"b\'c', "tab\tand&amp;", "x/../y?z=1#f"]


def test_the_page_lists_users_with_their_role_and_escapes_odd_names(client_for, admin, make_user):
    for name in ODD_NAMES:
        make_user(name, "viewer")

    page = client_for(admin).get("/accounts/users/").content.decode()

    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'value="a&quot;b&#x27;c"' in page and "tab\tand&amp;amp;" in page
    partial = client_for(admin).get("/accounts/users/", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith("<table ") and 'id="user-table"' in partial.split(">", 1)[0] and "<html" not in partial


@pytest.mark.parametrize("name", ODD_NAMES)
def test_an_admin_sets_the_role_of_an_oddly_named_user(client_for, admin, make_user, name):
    user = make_user(name, "viewer")

    response = client_for(admin).post("/accounts/users/role/", {"username": name, "role": "operator",
                                                                 "reason": "rota"})

    assert response.status_code == 302 and response.url == "/accounts/users/"
    assert user_role(user) == Role.OPERATOR
    assert AuditEvent.objects.get(action=ROLE_SET_ACTION, outcome="success").params["username"] == name


@pytest.mark.parametrize("fixture", ["viewer", "operator"])
def test_non_admins_get_neither_the_page_nor_its_partial_nor_the_change(request, client_for, fixture, admin):
    client = client_for(request.getfixturevalue(fixture))

    assert client.get("/accounts/users/").status_code == 403
    assert client.get("/accounts/users/", headers={"HX-Request": "true"}).status_code == 403
    refused = client.post("/accounts/users/role/", {"username": "ada", "role": "viewer", "reason": "coup"})
    assert refused.status_code == 403 and user_role(admin) == Role.ADMIN
    assert not AuditEvent.objects.exists()


def test_the_change_needs_a_csrf_token_and_a_post(admin, viewer):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin)

    assert client.post("/accounts/users/role/", {"username": "vera", "role": "admin", "reason": "x"}).status_code == 403
    assert client.get("/accounts/users/role/", {"username": "vera", "role": "admin", "reason": "x"}).status_code == 405
    assert user_role(viewer) == Role.VIEWER


def test_refusals_come_back_as_the_error_partial_for_htmx(client_for, admin):
    response = client_for(admin).post("/accounts/users/role/", {"username": "ada", "role": "none", "reason": "x"},
                                      headers={"HX-Request": "true"})

    assert response.status_code == 409 and response["HX-Retarget"] == "#flash"
    assert "ada is the last active admin" in response.content.decode()


@hyp_settings(max_examples=200, deadline=None)
@given(role=st.text(max_size=20))
def test_the_form_accepts_only_the_four_role_values(role):
    form = RoleSetForm({"username": "vera", "role": role, "reason": "r"})

    assert form.is_valid() == (role in {"viewer", "operator", "admin", "none"})


def test_the_page_is_linked_for_admins_only(client_for, admin, viewer):
    assert 'href="/accounts/users/"' in client_for(admin).get("/audit/").content.decode()
    assert 'href="/accounts/users/"' not in client_for(viewer).get("/audit/").content.decode()


def _to_callback(client):
    """Signs in at the provider and returns the callback URL's path and query, not yet followed."""
    import json
    from urllib.parse import parse_qs, urlsplit

    import requests

    start = client.get("/accounts/oidc/authenticate/", {"next": "/audit/"})
    signed_in = requests.post(start.headers["Location"], timeout=10, allow_redirects=False,
                              data={"username": "alice", "claims": json.dumps({"groups": ["kafka-admins"]})})
    back = urlsplit(signed_in.headers["Location"])
    return back.path, {k: v[0] for k, v in parse_qs(back.query).items()}


@pytest.mark.parametrize("where", ["closed port", "silent server"])
def test_a_provider_that_is_down_gives_a_clear_page_within_seconds(sso, settings, client, django_user_model,
                                                                   silent_server, where):
    from devstack.kafka import free_port

    path, query = _to_callback(client)
    down = f"127.0.0.1:{free_port()}" if where == "closed port" else silent_server
    settings.OIDC_OP_TOKEN_ENDPOINT = f"http://{down}/corp/token"

    started = time.monotonic()
    response = client.get(path, query)
    took = time.monotonic() - started

    page = response.content.decode()
    assert response.status_code == 200 and took < settings.OIDC_TIMEOUT + 3, (response.status_code, took)
    assert "Corp SSO could not complete your sign-in" in page
    assert ("could not connect" if where == "closed port" else f"no answer within {settings.OIDC_TIMEOUT} s") in page
    assert 'href="/accounts/oidc/authenticate/"' in page  # try again
    assert not django_user_model.objects.filter(username="sso:alice").exists()
    assert client.get("/audit/").status_code == 302  # not logged in
