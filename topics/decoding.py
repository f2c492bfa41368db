"""How a record's key, value and headers are shown: JSON when it parses, text when UTF-8, hex otherwise."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Decoded:
    kind: str  # json, text, hex, null, empty
    text: str


def decode_bytes(data: bytes | None, *, max_chars: int = 10_000) -> Decoded:
    if data is None:
        return Decoded("null", "")
    if not data:
        return Decoded("empty", "")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        hexed = data[: max_chars // 2].hex(" ")
        return Decoded("hex", hexed + (" …" if len(data) * 2 > max_chars else ""))
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    # Bare numbers and strings parse as JSON too, but showing them "as JSON" adds nothing.
    if isinstance(parsed, dict | list):
        pretty = json.dumps(parsed, indent=2, ensure_ascii=False, sort_keys=False)
        return Decoded("json", pretty[:max_chars])
    return Decoded("text", text[:max_chars])
