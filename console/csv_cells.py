"""A CSV cell that a spreadsheet would run as a formula (it starts with = + - @, a tab or a carriage return) is
written with a quote mark before it, which spreadsheets show as text; the import takes that mark away again.

A cell that already starts with quote marks before such a character gets one more, so the mapping goes both ways
for every text: what an export writes, the import reads back as it was."""

from __future__ import annotations

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _armed(text: str) -> bool:
    return text.lstrip("'").startswith(TRIGGERS)


def guard_formula(text: str) -> str:
    """The cell as the export writes it."""
    return "'" + text if _armed(text) else text


def unguard_formula(text: str) -> str:
    """The cell as it was before guard_formula."""
    return text[1:] if text.startswith("'") and _armed(text) else text
