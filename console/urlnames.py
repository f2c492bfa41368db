"""A path converter for Kafka names, which may hold any character: `/`, `%`, `#`, `?`, spaces, quotes, markup,
any Unicode, or be `.`, `..` or empty (Kafka accepts any string as a group id).

A server decodes `%2F` back into `/` before Django sees the path, so percent-encoding alone cannot carry a
slash inside one segment. This converter first escapes `~` and `/` as `~7E` and `~2F` (and a whole name of
`.` or `..`, which browsers would resolve away, and the empty name); `reverse()` then percent-encodes the
rest, and the server's decoding gives the escaped text back, which `to_python` turns into the name.
"""

from __future__ import annotations

import re

_ESCAPED = re.compile(r"~(7E|2F|2E)")
_CODES = {"7E": "~", "2F": "/", "2E": "."}
EMPTY = "~"


def escape_name(name: str) -> str:
    if name == "":
        return EMPTY
    escaped = name.replace("~", "~7E").replace("/", "~2F")
    if escaped in (".", ".."):
        escaped = escaped.replace(".", "~2E")
    return escaped


def unescape_name(text: str) -> str:
    if text == EMPTY:
        return ""
    return _ESCAPED.sub(lambda m: _CODES[m.group(1)], text)


class KafkaNameConverter:
    regex = r"[^/]+"

    def to_python(self, value: str) -> str:
        return unescape_name(value)

    def to_url(self, value: str) -> str:
        return escape_name(str(value))
