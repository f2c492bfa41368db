"""Making and revoking tokens (console/tokens/services.py): the rules, the digest, the audit rows."""

from __future__ import annotations

import pytest

from console.accounts.roles import Role
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.errors import ConsoleError, NotFound, PermissionRefused
from console.tokens.models import ApiToken
from console.tokens.services import (
    MSG_EXECUTE_READ_ONLY, MSG_NOT_YOURS, MSG_ROLE_ABOVE, MSG_UNKNOWN_CLUSTERS, token_digest, token_revoke,
)

pytestmark = pytest.mark.django_db


def test_a_token_is_shown_once_and_kept_as_a_digest(operator, make_token, local_cluster):
    token, secret = make_token(operator, role=Role.OPERATOR, clusters=["local"], read_only=True)
    assert secret.startswith("kc_") and len(secret) > 40
    stored = ApiToken.objects.get(pk=token.pk)
    assert stored.digest == token_digest(secret) and secret not in str(stored.__dict__)
    assert stored.prefix == secret[:10] and stored.clusters == ["local"] and stored.read_only
    assert stored.state() == "active" and (stored.expires_at - stored.created_at).days == 30
    event = AuditEvent.objects.filter(action="token.create", outcome="success").get()
    assert secret not in str(event.params) + str(event.after) and event.after["role"] == "operator"


def test_a_token_cannot_be_above_its_creators_role_and_the_refusal_is_audited(viewer, make_token):
    with pytest.raises(PermissionRefused) as refused:
        make_token(viewer, role=Role.ADMIN)
    assert refused.value.message == MSG_ROLE_ABOVE.format(who="vera", held="viewer", asked="admin")
    assert AuditEvent.objects.filter(action="token.create", outcome="refused").count() == 1
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize(("options", "message"), [
    ({"clusters": ["nowhere"]}, MSG_UNKNOWN_CLUSTERS.format(names="'nowhere'")),
    ({"read_only": True, "mcp_execute": True}, MSG_EXECUTE_READ_ONLY),
    ({"name": " "}, "Give the token a name"),
    ({"name": "a\nb"}, "Give the token a name"),
    ({"days": 0}, "A token lasts from 1 to 365 days."),
    ({"days": 366}, "A token lasts from 1 to 365 days."),
])
def test_bad_requests_are_refused_and_nothing_is_made(admin, make_token, options, message):
    with pytest.raises(ConsoleError) as refused:
        make_token(admin, **options)
    assert message in refused.value.message
    assert not ApiToken.objects.exists()


def test_its_owner_or_an_admin_revokes_it_and_nobody_else(viewer, operator, admin, make_token):
    token, _ = make_token(viewer)
    with pytest.raises(PermissionRefused) as refused:
        token_revoke(actor=Actor(user=operator, source="web"), token_id=token.pk)
    assert refused.value.message == MSG_NOT_YOURS.format(id=token.pk)
    token_revoke(actor=Actor(user=admin, source="web"), token_id=token.pk, reason="leaked in a log")
    token.refresh_from_db()
    assert token.state() == "revoked" and token.revoked_by == "ada"
    with pytest.raises(ConsoleError):
        token_revoke(actor=Actor(user=viewer, source="web"), token_id=token.pk)
    with pytest.raises(NotFound):
        token_revoke(actor=Actor(user=admin, source="web"), token_id=token.pk + 1000)
    outcomes = list(AuditEvent.objects.filter(action="token.revoke").values_list("outcome", flat=True))
    assert sorted(outcomes) == ["intent", "refused", "success"]
