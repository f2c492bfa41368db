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


def joined_values(data, name: str) -> str:
    """A field posted once as "0,2" or several times ("0", "2"), as one comma-separated text."""
    values = data.getlist(name) if hasattr(data, "getlist") else [data.get(name) or ""]
    return ",".join(v.strip() for value in values for v in str(value).split(",") if v.strip())


class PartitionsText(forms.TextInput):
    """Partitions typed as "0,2"; ticks posted as several values read the same."""

    def value_from_datadict(self, data, files, name) -> str:
        return joined_values(data, name)


class PartitionTicks(forms.CheckboxSelectMultiple):
    """A tick for each of the topic's partitions, read as the text the field has always taken ("0,2"), so links
    written with that text keep working."""

    def value_from_datadict(self, data, files, name) -> str:
        return joined_values(data, name)

    def format_value(self, value) -> list[str]:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return super().format_value(value)
