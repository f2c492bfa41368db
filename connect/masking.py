"""Which connector settings are secrets, and how they are shown: masked in pages, JSON output and audit rows.

A setting is secret when its plugin declares it a PASSWORD, or when its name says so (password, secret,
credentials, tokens, JAAS configurations, and names ending in "key": api.key, aws.access.key, ssl.keystore.key).
A value made only of config provider references (`${file:/etc/secrets.properties:password}`) holds no secret:
the worker resolves it, and it is shown as written. Pure: no Django, no Connect."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MASK = "********"
_SECRET_NAME = re.compile(r"password|passwd|secret|credential|token|jaas|(key$)", re.IGNORECASE)
_ONLY_REFERENCES = re.compile(r"(\$\{[^{}]+\})+")


def is_secret_key(key: str, declared: Iterable[str] = ()) -> bool:
    return key in set(declared) or bool(_SECRET_NAME.search(key))


def is_reference(value: object) -> bool:
    return isinstance(value, str) and bool(_ONLY_REFERENCES.fullmatch(value.strip()))


def mask_value(key: str, value, declared: Iterable[str] = ()):
    if value is None or value == "" or not is_secret_key(key, declared) or is_reference(value):
        return value
    return MASK


def mask_config(config: Mapping[str, object], declared: Iterable[str] = ()) -> dict:
    declared = frozenset(declared)
    return {key: mask_value(key, value, declared) for key, value in config.items()}


def mask_rest(entry: Mapping, declared: Iterable[str] = ()) -> dict:
    """A REST answer with every "config" object in it masked (GET /connectors/{name}, the expanded list's entry)."""
    masked = {}
    for key, value in entry.items():
        if key == "config" and isinstance(value, Mapping):
            masked[key] = mask_config(value, declared)
        elif isinstance(value, Mapping):
            masked[key] = mask_rest(value, declared)
        else:
            masked[key] = value
    return masked


def unmask(submitted: Mapping[str, str], current: Mapping[str, str]) -> dict[str, str]:
    """A configuration edited from a masked one: a secret left as the mask keeps its current value."""
    return {key: current[key] if value == MASK and key in current else value for key, value in submitted.items()}
