"""The JSON of `manage.py acls|users --format json`, which the API answers too."""

from __future__ import annotations

from dataclasses import asdict

from access.bindings import entry_json


def acls_json(entries) -> list[dict]:
    return [entry_json(e) for e in entries]


def scram_users_json(users) -> list[dict]:
    """Each user's SCRAM mechanisms and iterations: never a password or a salted hash."""
    return [asdict(u) for u in users]


def quotas_json(quotas) -> list[dict]:
    return [{**asdict(q), "values": dict(q.values)} for q in quotas]
