"""Cursor pagination over a list sorted by a key: each page names the key after which the next one starts, so a
client walks 50,000 groups page by page and an item added or removed meanwhile moves no other item between pages
(offset paging would skip or repeat one). A page holds at most MAX_LIMIT items, the default is the pages' size."""

from __future__ import annotations

import base64
import binascii
import json
from bisect import bisect_right
from collections.abc import Callable, Sequence

from console.errors import ConsoleError

DEFAULT_LIMIT = 50  # the console's list pages show 50 rows (offsets/views.py GROUPS_PAGE_SIZE, the topic list)
MAX_LIMIT = 1000
MSG_CURSOR = "This cursor was not made by this API (pass back `next_cursor` exactly as it came)."


def encode_cursor(key) -> str:
    return base64.urlsafe_b64encode(json.dumps(key, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_cursor(cursor: str):
    try:
        return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise ConsoleError(MSG_CURSOR, field="cursor") from exc


def page_after(items: Sequence, *, key: Callable, cursor: str | None, limit: int) -> dict:
    """`items` sorted by `key` (unique, JSON-able); the page after the cursor's key and the cursor of the next."""
    keys = [key(item) for item in items]
    start = 0
    if cursor:
        after = decode_cursor(cursor)
        if isinstance(after, list):
            after = tuple(after)
        try:
            start = bisect_right([tuple(k) if isinstance(k, list) else k for k in keys], after)
        except TypeError as exc:
            raise ConsoleError(MSG_CURSOR, field="cursor") from exc
    chosen = items[start:start + limit]
    more = start + limit < len(items)
    return {"items": list(chosen), "next_cursor": encode_cursor(keys[start + limit - 1]) if more else None,
            "total": len(items)}
