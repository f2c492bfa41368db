"""What every bulk action shares: how many objects one may touch, and the phrase a person types to confirm it.
Pure, apart from reading a setting."""

from __future__ import annotations

from django.conf import settings

from console.errors import ConsoleError

MSG_TOO_MANY = "A bulk action takes at most {limit} objects at once; {count} were chosen. Narrow the filter."
MSG_NOTHING_CHOSEN = "Nothing was chosen: the filter matches no {noun}."
MSG_CONFIRM = "Type '{phrase}' exactly to confirm."


def max_objects() -> int:
    """BULK_MAX_OBJECTS (default 1000): one preview must stay readable, and one batch bounded."""
    return int(getattr(settings, "BULK_MAX_OBJECTS", 1000))


def chosen_names(names: list[str], *, noun: str) -> list[str]:
    """The names once each, in the order given; refuses none and too many."""
    unique = list(dict.fromkeys(names))
    if not unique:
        raise ConsoleError(MSG_NOTHING_CHOSEN.format(noun=noun))
    if len(unique) > max_objects():
        raise ConsoleError(MSG_TOO_MANY.format(limit=max_objects(), count=len(unique)))
    return unique


def confirmation_phrase(verb: str, count: int, noun: str) -> str:
    return f"{verb} {count} {noun}{'' if count == 1 else 's'}"


def check_confirmation(typed: str, phrase: str) -> None:
    if typed.strip() != phrase:
        raise ConsoleError(MSG_CONFIRM.format(phrase=phrase))
