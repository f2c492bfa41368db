"""The masking hash key: a secret, so from the environment only (never settings files or the database)."""

from __future__ import annotations

import os

HASH_KEY_VARIABLE = "CONSOLE_MASKING_HASH_KEY"


def hash_key() -> bytes | None:
    """The key of the hash action; None when unset, and then hashing rules hide instead (they fail closed)."""
    value = os.environ.get(HASH_KEY_VARIABLE, "")
    return value.encode() if value else None
