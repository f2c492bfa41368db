"""Form helpers shared by the apps."""

from __future__ import annotations

from django import forms

from console.parsing import parse_pairs


def clean_pairs(text: str) -> dict[str, str]:
    """A key=value text field's value, or the parsing problem as the field's error."""
    try:
        return parse_pairs(text)
    except ValueError as exc:
        raise forms.ValidationError(str(exc)) from exc
