"""The shape of a change that a request can hold: how its plan is read again from Kafka (with the fingerprint that
must not move between the request and its execution) and how its service runs it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from console.accounts.roles import Role


@dataclass(frozen=True)
class Plan:
    """What the change would do, read now: `rows` and `facts` for people (JSON), `fingerprint` for the check."""

    summary: dict
    fingerprint: str


@dataclass(frozen=True)
class ChangeAction:
    name: str  # the request's action, the key here
    label: str  # "offset reset", for people
    role: Role  # who may ask for it, approve or reject it: the role the page and the shell ask for the change
    target: Callable[[dict], str]  # kwargs -> "group:NAME" / "topic:NAME"
    plan: Callable[[str, dict], Plan]  # (cluster, kwargs) -> the plan read now
    run: Callable[..., Any]  # (actor=, cluster=, kwargs=, reason=, fingerprint=) -> JSON of what it read back


def fingerprint_of(value: Any) -> str:
    """A short digest of a JSON-able value: the same plan gives the same digest in every process."""
    payload = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
