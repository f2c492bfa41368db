"""SSO sessions are re-checked with the provider at most every CONSOLE_SSO_RECHECK_S: a role lowered there is
applied at the next request, a session the provider refuses or cannot confirm ends."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from console.accounts.roles import ROLE_SET_ACTION, Role, user_role
from console.accounts.sso import (MSG_RECHECK_REFUSED, MSG_RECHECK_UNREACHABLE, MSG_SESSION_ENDED,
                                  SESSION_CHECKED_AT)
from console.audit.models import AuditEvent
from tests.fixtures.identity import SSO_CLIENT_ID
from tests.console.accounts.test_sso import sso_login

pytestmark = [pytest.mark.django_db]


@pytest.fixture(scope="module")
def identity_provider(tmp_path_factory):
    """This module's own provider (the `sso` fixture takes it): one test restarts it."""
    from devstack.identity import IdentityProvider
    from devstack.kafka import free_ports

    provider = IdentityProvider(home=tmp_path_factory.mktemp("identity-recheck"), port=free_ports(1)[0])
    provider.start()
    provider.wait_ready()
    yield provider
    provider.stop()


def _page(client, url="/audit/"):
    return client.get(url)


def _login_page_text(client) -> str:
    return client.get("/accounts/login/").content.decode()


def test_a_session_is_not_asked_again_before_the_interval(sso, settings, client, django_user_model):
    settings.CONSOLE_SSO_RECHECK_S = 300
    sso_login(client, "alice", {"groups": ["kafka-admins"]})
    checked = client.session[SESSION_CHECKED_AT]
    settings.OIDC_OP_TOKEN_ENDPOINT = "http://127.0.0.1:9/never-called"

    assert _page(client).status_code == 200
    assert client.session[SESSION_CHECKED_AT] == checked


def test_an_unchanged_role_is_confirmed_with_the_real_provider(sso, settings, client, django_user_model):
    sso_login(client, "alice", {"groups": ["kafka-admins"]})
    checked = client.session[SESSION_CHECKED_AT]
    settings.CONSOLE_SSO_RECHECK_S = 0

    assert _page(client, "/accounts/users/").status_code == 200
    assert client.session[SESSION_CHECKED_AT] > checked
    assert user_role(django_user_model.objects.get(username="sso:alice")) == Role.ADMIN
    assert not AuditEvent.objects.filter(action=ROLE_SET_ACTION).exists()


def test_local_sessions_are_never_sent_to_the_provider(sso, settings, client_for, admin):
    settings.CONSOLE_SSO_RECHECK_S = 0
    settings.OIDC_OP_TOKEN_ENDPOINT = "http://127.0.0.1:9/never-called"

    assert client_for(admin).get("/accounts/users/").status_code == 200


class _Refusing(BaseHTTPRequestHandler):
    def do_POST(self):  # what a provider answers a refresh token it revoked (RFC 6749 5.2)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"error": "invalid_grant", "error_description": "session revoked"}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_session_the_provider_refuses_ends_at_the_next_request(sso, settings, client):
    sso_login(client, "alice", {"groups": ["kafka-admins"]})
    server = HTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings.OIDC_OP_TOKEN_ENDPOINT = f"http://127.0.0.1:{server.server_port}/corp/token"
        settings.CONSOLE_SSO_RECHECK_S = 0
        ended = _page(client)
    finally:
        server.shutdown()
        server.server_close()

    assert ended.status_code == 302 and ended.url.startswith("/accounts/login/")
    assert MSG_SESSION_ENDED.format(detail=MSG_RECHECK_REFUSED) in _login_page_text(client)
    assert _page(client).status_code == 302


def test_a_provider_that_cannot_confirm_ends_the_session_within_the_timeout(sso, settings, client, silent_server):
    import time

    sso_login(client, "alice", {"groups": ["kafka-admins"]})
    settings.OIDC_OP_TOKEN_ENDPOINT = f"http://{silent_server}/corp/token"
    settings.CONSOLE_SSO_RECHECK_S, settings.OIDC_TIMEOUT = 0, 1

    started = time.monotonic()
    ended = client.get("/audit/", headers={"HX-Request": "true"})

    assert time.monotonic() - started < 4
    assert ended.status_code == 200 and ended["HX-Redirect"] == "/accounts/login/"
    detail = MSG_RECHECK_UNREACHABLE.format(detail="no answer within 1 s")
    assert MSG_SESSION_ENDED.format(detail=detail) in _login_page_text(client)


def test_a_role_lowered_at_the_provider_applies_at_the_next_request(sso, settings, client, django_user_model):
    sso_login(client, "alice", {"preferred_username": "alice", "groups": ["kafka-admins"]})
    assert _page(client, "/accounts/users/").status_code == 200

    # The mock provider keeps a login's claims for as long as it runs; its directory changes the way a restart
    # with new data changes it: it forgets its sessions and answers for alice with what it now holds.
    sso.stop()
    sso.token_callbacks = [{"issuerId": "corp", "requestMappings": [{
        "requestParam": "grant_type", "match": "refresh_token",
        "claims": {"sub": "alice", "aud": [SSO_CLIENT_ID], "preferred_username": "alice", "groups": ["staff"]}}]}]
    sso.start()
    sso.wait_ready()
    settings.CONSOLE_SSO_RECHECK_S = 0

    refused = _page(client, "/accounts/users/")

    assert refused.status_code == 403 and "needs the admin role; sso:alice has viewer" in refused.content.decode()
    assert "sso:alice · viewer" in _page(client).content.decode()
    event = AuditEvent.objects.get(action=ROLE_SET_ACTION, outcome="success")
    assert (event.source, event.before["role"], event.after["role"]) == ("system", "admin", "viewer")
    assert event.params["via"] == "sso-recheck" and event.params["claims"] == ["staff"]
