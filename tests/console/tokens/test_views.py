"""The API tokens page: the secret on the answer that made it and nowhere after, the list with last use, revoking."""

from __future__ import annotations

import re

import pytest

from console.tokens.models import ApiToken

pytestmark = pytest.mark.django_db


def test_a_token_made_on_the_page_is_shown_once(client_for, operator, local_cluster):
    client = client_for(operator)
    page = client.get("/tokens/").content.decode()
    assert "Make a token" in page and 'value="3"' not in page  # an operator cannot choose admin
    made = client.post("/tokens/new/", {"name": "ci orders", "kind": "service", "role": "2", "expires_days": "30",
                                        "clusters": ["local"], "read_only": "on", "reason": "CI"})
    assert made.status_code == 200 and made["Cache-Control"] == "no-store"
    secret = re.search(r"data-token>(kc_[^<]+)<", made.content.decode())[1]
    token = ApiToken.objects.get()
    assert token.name == "ci orders" and token.read_only and token.clusters == ["local"] and token.role == 2
    again = client.get("/tokens/").content.decode()
    assert secret not in again and token.prefix in again and "never" in again and "read-only" in again


def test_a_refused_form_answers_at_its_fields(client_for, viewer):
    refused = client_for(viewer).post("/tokens/new/", {"name": "x", "role": "3", "expires_days": "30"},
                                      HTTP_HX_REQUEST="true")
    assert refused.status_code == 400 and 'data-field="role"' in refused.content.decode()
    assert not ApiToken.objects.exists()


def test_people_see_their_own_tokens_and_admins_everyones(client_for, viewer, operator, admin, make_token):
    mine, _ = make_token(viewer, name="vera-laptop")
    theirs, _ = make_token(operator, name="otto-ci")
    page = client_for(viewer).get("/tokens/").content.decode()
    assert "vera-laptop" in page and "otto-ci" not in page
    assert "otto-ci" in client_for(admin).get("/tokens/").content.decode()


def test_revoking_from_the_page(client_for, viewer, operator, make_token):
    token, _ = make_token(viewer)
    refused = client_for(operator).post(f"/tokens/{token.pk}/revoke/", {"reason": "x"})
    assert refused.status_code == 403
    done = client_for(viewer).post(f"/tokens/{token.pk}/revoke/", {"reason": "laptop lost"}, follow=True)
    assert "revoked" in done.content.decode()
    token.refresh_from_db()
    assert token.revoked_by == "vera"
