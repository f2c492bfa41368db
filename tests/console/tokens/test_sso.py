"""A person signed in with single sign-on calls the API with the access token their provider gave them
(console/tokens/sso.py), against the session's real OpenID Connect provider: the provider's userinfo answer says
who holds the token, the account's role applies with the provider's role claim as a ceiling, and what the
provider refuses is refused here."""

from __future__ import annotations

import pytest
from django.test import Client

from console.accounts.models import SsoIdentity
from console.accounts.roles import Role, user_role
from console.accounts.sso import SESSION_ACCESS_TOKEN
from console.errors import PermissionRefused
from console.tokens.auth import MSG_NO_EXECUTE, TokenRefused, token_authenticate, token_scope_check
from console.tokens.sso import MSG_NO_ACCOUNT, MSG_PROVIDER_REFUSED, SSO_TOKEN_NAME, forget_sso_callers
from tests.console.accounts.test_sso import sso_login

pytestmark = [pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _no_remembered_tokens():
    forget_sso_callers()
    yield
    forget_sso_callers()


def _signed_in_token(client, username: str, groups: list[str]) -> str:
    landed = sso_login(client, username, {"preferred_username": username, "groups": groups})
    assert landed.status_code == 302, landed.content[:300]
    return client.session[SESSION_ACCESS_TOKEN]


def test_the_access_token_of_a_signed_in_person_calls_the_api_as_them(sso, client):
    token = _signed_in_token(client, "dana", ["kafka-oncall"])

    call = token_authenticate(token, source="api", remote_addr="10.0.0.7")
    assert call.user.get_username() == "sso:dana" and user_role(call.user) == Role.OPERATOR
    assert call.actor.name == f"sso:dana ({SSO_TOKEN_NAME})" and call.actor.source == "api"
    with pytest.raises(PermissionRefused) as refused:  # executing through MCP needs a console token made for it
        token_scope_check(call, what="mcp:reset_execute", cluster="local", execute=True)
    assert refused.value.message == MSG_NO_EXECUTE

    program = Client()  # no session: only the header speaks for it
    listed = program.get("/api/v1/clusters", headers={"Authorization": f"Bearer {token}"})
    assert listed.status_code == 200, listed.content[:300]
    anonymous = program.get("/api/v1/clusters")
    assert anonymous.status_code == 401


def test_a_token_the_provider_refuses_gets_401_with_its_answer(sso, client):
    token = _signed_in_token(client, "erin", ["staff"])
    tampered = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")

    answer = Client().get("/api/v1/clusters", headers={"Authorization": f"Bearer {tampered}"})
    assert answer.status_code == 401
    problem = answer.json()
    assert problem["detail"].startswith(MSG_PROVIDER_REFUSED.split("(")[0]), problem
    assert answer["WWW-Authenticate"].startswith("Bearer")


def test_no_account_no_call_and_a_role_claim_lowered_is_a_ceiling(sso, client, settings):
    token = _signed_in_token(client, "fay", ["kafka-admins"])
    assert user_role(token_authenticate(token, source="api", remote_addr=None).user) == Role.ADMIN

    # The provider's claim now maps to a lower role (the map changed): the account keeps its role for the pages'
    # next login to change, the API call gets the claim's role at once.
    forget_sso_callers()
    settings.CONSOLE_SSO_ROLE_MAP = "kafka-admins=viewer"
    assert user_role(token_authenticate(token, source="api", remote_addr=None).user) == Role.VIEWER

    forget_sso_callers()
    SsoIdentity.objects.filter(subject="fay").delete()
    with pytest.raises(TokenRefused) as refused:
        token_authenticate(token, source="api", remote_addr=None)
    assert refused.value.message == MSG_NO_ACCOUNT
