"""Tokens and an API client for the tests of api/, and the shell's JSON to compare the API with."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command


@pytest.fixture
def token_for(db):
    """token_for(user, role=Role.X, **options) -> the secret of a token made through the service."""
    from console.accounts.roles import Role
    from console.audit.actor import Actor
    from console.tokens.services import token_create

    def make(user, *, role=None, days: int = 30, **options):
        role = role if role is not None else Role.VIEWER
        _, secret = token_create(actor=Actor(user=user, source="web"), name=options.pop("name", "test"),
                                 role=role, expires_days=days, **options)
        return secret

    return make


class Api:
    """Django's test client with a bearer token: JSON in, the response back (its .json() for the body)."""

    def __init__(self, client, secret: str) -> None:
        self.client, self.headers = client, {"Authorization": f"Bearer {secret}"}

    def get(self, path: str, params: dict | None = None):
        return self.client.get("/api/v1" + path, params or {}, headers=self.headers)

    def post(self, path: str, body: dict | None = None):
        return self.client.post("/api/v1" + path, json.dumps(body or {}), content_type="application/json",
                                headers=self.headers)

    def patch(self, path: str, body: dict):
        return self.client.patch("/api/v1" + path, json.dumps(body), content_type="application/json",
                                 headers=self.headers)

    def delete(self, path: str, params: dict):
        from urllib.parse import urlencode

        return self.client.delete("/api/v1" + path + "?" + urlencode(params), headers=self.headers)

    def pages(self, path: str, params: dict | None = None, *, limit: int = 2) -> list:
        """Every item of a paged list, walked page by page with the cursor."""
        items, cursor = [], None
        while True:
            answer = self.get(path, {**(params or {}), "limit": limit, **({"cursor": cursor} if cursor else {})})
            assert answer.status_code == 200, answer.content
            body = answer.json()
            items += body["items"]
            cursor = body["next_cursor"]
            if cursor is None:
                return items


@pytest.fixture
def api_as(client, token_for):
    """api_as(user, **token options) -> an Api calling with a new token of that user."""

    def make(user, **options):
        return Api(client, token_for(user, **options))

    return make


def shell_json(*args, **options):
    """What `manage.py ARGS --format json` prints, parsed (one JSON value, or one per line)."""
    out = StringIO()
    call_command(*args, "--format", "json", stdout=out, **options)
    text = out.getvalue()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
