"""The pure part of single sign-on: the role map, claim paths and the username an identity gets."""

from __future__ import annotations

import pytest
from django.test import override_settings
from hypothesis import given
from hypothesis import strategies as st

from console.accounts.roles import Role
from console.accounts.sso import claim_values, parse_role_map, role_for, sso_username, token_mismatch


def test_role_map_reads_value_equals_role_pairs():
    # A value may hold '=' (an LDAP-style group name): the role is what follows the last one.
    assert parse_role_map(" kafka-admins=admin, cn=oncall=operator ,staff=Viewer,") == {
        "kafka-admins": Role.ADMIN, "cn=oncall": Role.OPERATOR, "staff": Role.VIEWER}


@pytest.mark.parametrize("text", ["kafka-admins", "=admin", "x=root", "x=admin,y"])
def test_a_bad_role_map_entry_is_named(text):
    with pytest.raises(ValueError, match="is not VALUE=viewer\\|operator\\|admin"):
        parse_role_map(text)


def test_the_highest_mapped_value_wins_and_unmapped_values_count_for_nothing():
    mapping = {"staff": Role.VIEWER, "kafka-oncall": Role.OPERATOR, "kafka-admins": Role.ADMIN}
    assert role_for(["staff", "kafka-oncall", "finance"], mapping) == Role.OPERATOR
    assert role_for(["finance"], mapping) is None
    assert role_for([], mapping) is None


def test_claim_paths_reach_nested_lists_and_single_values():
    claims = {"groups": ["a", "b"], "realm_access": {"roles": ["kafka-admins"]}, "role": "viewer", "n": None}
    assert claim_values(claims, "groups") == ["a", "b"]
    assert claim_values(claims, "realm_access.roles") == ["kafka-admins"]
    assert claim_values(claims, "role") == ["viewer"]
    assert claim_values(claims, "realm_access.missing.deeper") == []
    assert claim_values(claims, "n") == []


@given(name=st.text(min_size=1, max_size=400))
def test_sso_usernames_are_namespaced_and_fit_the_column(name):
    with override_settings(CONSOLE_SSO_USERNAME_CLAIM="preferred_username"):
        username = sso_username({"preferred_username": name, "sub": "s"})
    assert username.startswith("sso:") and len(username) <= 150


def test_username_falls_back_to_email_then_subject():
    with override_settings(CONSOLE_SSO_USERNAME_CLAIM="upn"):
        assert sso_username({"email": "a@corp.example", "sub": "1"}) == "sso:a@corp.example"
        assert sso_username({"sub": "f81d4fae"}) == "sso:f81d4fae"


def test_an_id_token_for_another_client_or_issuer_is_refused():
    good = {"aud": ["kafka-console", "other"], "iss": "https://idp/corp", "sub": "42"}
    assert token_mismatch(good, client_id="kafka-console", issuer="https://idp/corp") is None
    assert token_mismatch({**good, "aud": "kafka-console"}, client_id="kafka-console", issuer="") is None
    assert "issued to other, not to kafka-console" in token_mismatch({**good, "aud": "other"},
                                                                     client_id="kafka-console", issuer="")
    assert "not 'https://idp/corp'" in token_mismatch({**good, "iss": "https://evil"}, client_id="kafka-console",
                                                      issuer="https://idp/corp")
    assert "no subject" in token_mismatch({**good, "sub": ""}, client_id="kafka-console", issuer="")
