"""Which connector settings say where the worker connects: an address, host, port, endpoint or bootstrap setting
by its name, or any value holding a URL. A secret kept masked while one of them changes would be sent to the new
place, so such an edit must give the secret again (connect/services.py). Pure."""

from __future__ import annotations

import re

from connect.masking import is_secret_key

_WORDS = frozenset({"url", "urls", "uri", "uris", "host", "hosts", "hostname", "port", "bootstrap", "server",
                    "servers", "endpoint", "endpoints", "address", "addresses", "broker", "brokers", "dsn", "nodes",
                    "domain", "region", "bucket", "account"})
_PARTS = re.compile(r"[._\-]+")


def is_destination(key: str, value: str | None) -> bool:
    if is_secret_key(key):
        return False
    parts = [part.lower() for part in _PARTS.split(key) if part]
    return (any(part in _WORDS or part.endswith(("url", "uri", "host")) for part in parts)
            or "://" in (value or ""))


def destination_changes(current: dict[str, str], new: dict[str, str]) -> list[str]:
    """The destination settings added, changed or removed, by name; another plugin is another destination too (it
    may send the same secret anywhere)."""
    return sorted(key for key in set(current) | set(new)
                  if current.get(key) != new.get(key)
                  and (key == "connector.class" or is_destination(key, current.get(key))
                       or is_destination(key, new.get(key))))
