"""Parsing of `key=value` lists, shared by forms and management commands (which wrap the ValueError)."""

from __future__ import annotations

MSG_BAD_PAIR = "'{item}' is not key=value."


def parse_pairs(texts: str | list[str]) -> dict[str, str]:
    """key=value items separated by commas or new lines, from one text or several (repeated options).

    A comma fragment without '=' continues the previous value, so list values such as
    `cleanup.policy=compact,delete` survive; kafka-configs' bracket form `k=[a,b]` is accepted too.
    """
    pairs: dict[str, str] = {}
    last_key = None
    for text in [texts] if isinstance(texts, str) else texts:
        for line in text.splitlines():
            for raw in line.split(","):
                item = raw.strip()
                if not item:
                    continue
                key, sep, value = item.partition("=")
                if sep and key.strip():
                    last_key = key.strip()
                    pairs[last_key] = value.strip()
                elif last_key is not None and not sep:
                    pairs[last_key] += "," + item
                else:
                    raise ValueError(MSG_BAD_PAIR.format(item=item))
            last_key = None  # a new line always starts a new pair
    return {key: value[1:-1] if value.startswith("[") and value.endswith("]") else value
            for key, value in pairs.items()}


def parse_keys(texts: str | list[str]) -> list[str]:
    return [k.strip() for text in ([texts] if isinstance(texts, str) else texts)
            for k in text.replace("\n", ",").split(",") if k.strip()]


def format_pairs(pairs: dict) -> str:
    """The text parse_pairs reads back: one key=value a line."""
    return "\n".join(f"{key}={value}" for key, value in pairs.items())
