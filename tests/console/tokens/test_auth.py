"""Who a token is when a program calls (console/tokens/auth.py): refused when unknown, revoked, expired or its owner
is gone; its role a ceiling on the owner's; its clusters and read-only scope; the rate limit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console.accounts.roles import Role, user_role
from console.audit.models import AuditEvent
from console.errors import PermissionRefused
from console.tokens.auth import (
    MSG_CLUSTER, MSG_NO_EXECUTE, MSG_NO_TOKEN, MSG_READ_ONLY, MSG_UNKNOWN, RateLimited, TokenRefused, bearer_secret,
    token_authenticate, token_scope_check,
)
from console.tokens.models import ApiToken
from console.tokens.rate import rate_wait_s

pytestmark = pytest.mark.django_db


def authenticate(secret):
    return token_authenticate(secret, source="api", remote_addr="10.0.0.9")


def test_the_owner_acts_with_the_tokens_role_as_a_ceiling(admin, make_token):
    token, secret = make_token(admin, role=Role.VIEWER)
    call = authenticate(secret)
    assert call.user.pk == admin.pk and user_role(call.user) == Role.VIEWER
    assert user_role(admin) == Role.ADMIN  # the person's own role is untouched
    assert call.actor.source == "api" and call.actor.name == f"ada (token #{token.pk} t-ada)"
    token.refresh_from_db()
    assert token.last_used_at is not None and token.last_used_from == "10.0.0.9"


def test_a_role_taken_from_the_owner_is_taken_from_the_token(operator, make_token):
    _, secret = make_token(operator, role=Role.OPERATOR)
    operator.groups.clear()
    assert user_role(authenticate(secret).user) is None


@pytest.mark.parametrize("header", ["", "Basic abc", "Bearer", "Bearer  "])
def test_no_bearer_token(header):
    with pytest.raises(TokenRefused) as refused:
        bearer_secret(header)
    assert refused.value.message == MSG_NO_TOKEN and refused.value.status == 401


def test_unknown_revoked_expired_and_orphaned_tokens_get_401(viewer, make_token):
    for secret in ("kc_nothing", "not-even-ours"):
        with pytest.raises(TokenRefused) as refused:
            authenticate(secret)
        assert refused.value.message == MSG_UNKNOWN
    token, secret = make_token(viewer)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(TokenRefused, match="expired"):
        authenticate(secret)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() + timedelta(days=1),
                                                revoked_at=timezone.now(), revoked_by="ada")
    with pytest.raises(TokenRefused, match="revoked .* by ada"):
        authenticate(secret)
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=None)
    viewer.is_active = False
    viewer.save()
    with pytest.raises(TokenRefused, match="no longer an active user"):
        authenticate(secret)


def test_scope_refusals_are_403_and_audited(operator, make_token, local_cluster):
    token, secret = make_token(operator, role=Role.OPERATOR, clusters=["local"], read_only=True)
    call = authenticate(secret)
    token_scope_check(call, what="GET x", cluster="local")  # reading its cluster is fine
    for kwargs, message in (({"cluster": "prod"}, MSG_CLUSTER.format(clusters="'local'", cluster="prod")),
                            ({"cluster": "local", "write": True}, MSG_READ_ONLY)):
        with pytest.raises(PermissionRefused) as refused:
            token_scope_check(call, what="POST /api/v1/x", **kwargs)
        assert refused.value.message == message
    refusals = AuditEvent.objects.filter(action="token.refused", outcome="refused")
    assert refusals.count() == 2
    assert {e.actor_name for e in refusals} == {f"otto (token #{token.pk} t-otto)"}
    assert {e.source for e in refusals} == {"api"} and refusals.first().params["token"]["id"] == token.pk


def test_executing_through_mcp_needs_the_tokens_permission(operator, make_token):
    _, secret = make_token(operator, role=Role.OPERATOR)
    with pytest.raises(PermissionRefused, match="not execute them"):
        token_scope_check(authenticate(secret), what="mcp:execute_reset", cluster=None, execute=True)
    assert MSG_NO_EXECUTE.startswith("This token may preview")
    _, allowed = make_token(operator, role=Role.OPERATOR, mcp_execute=True, name="assistant")
    token_scope_check(authenticate(allowed), what="mcp:execute_reset", execute=True)


def test_the_rate_limit_counts_each_call_and_says_when_to_come_back(viewer, make_token, settings):
    settings.API_RATE_LIMIT_PER_MINUTE = 3
    token, secret = make_token(viewer)
    for _ in range(3):
        authenticate(secret)
    with pytest.raises(RateLimited) as limited:
        authenticate(secret)
    assert limited.value.status == 429 and 1 <= limited.value.retry_after <= 60
    other, other_secret = make_token(viewer, name="another")
    authenticate(other_secret)  # a limit per token, not per person


def test_a_new_minute_starts_a_new_count(settings):
    settings.API_RATE_LIMIT_PER_MINUTE = 1
    assert rate_wait_s("minute-test", now=600.0) == 0
    assert rate_wait_s("minute-test", now=630.5) == 29
    assert rate_wait_s("minute-test", now=660.0) == 0
