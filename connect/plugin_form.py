"""The create form of a connector plugin, built from Connect's own definition of it: every setting once, in
Connect's groups and order, with its type, whether it is required, its default, its documentation and the values
Connect recommends.

Connect's validation of a configuration that holds nothing but the plugin's class (PUT
/connector-plugins/{plugin}/config/validate) lists every setting the worker would take: the framework's (name,
tasks.max, topics, converters, error handling...) and the plugin's own. GET /connector-plugins/{plugin}/config
lists the framework's too, so a form that asked for name, tasks.max and topics before it showed those rendered
them twice, and the server read whichever copy came last.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.kafka_connect.types import ConfigValidation, FieldCheck

FIXED = frozenset({"connector.class"})  # chosen with the plugin, not typed
NUMBER_TYPES = frozenset({"INT", "LONG", "SHORT", "DOUBLE"})
OWN_GROUP = ""  # settings the plugin declares without a group


@dataclass(frozen=True)
class FormField:
    name: str
    label: str
    type: str  # Connect's: STRING, INT, LONG, SHORT, DOUBLE, BOOLEAN, LIST, CLASS, PASSWORD
    required: bool
    default: str | None
    importance: str
    documentation: str
    recommended: tuple[str, ...] = ()

    @property
    def input_name(self) -> str:
        return f"cfg:{self.name}"

    @property
    def secret(self) -> bool:
        return self.type == "PASSWORD"

    @property
    def number(self) -> bool:
        return self.type in NUMBER_TYPES

    @property
    def essential(self) -> bool:
        """Shown open, first: what a connector needs or Connect ranks as important."""
        return self.required or self.importance == "HIGH"


@dataclass(frozen=True)
class FormSection:
    title: str
    fields: tuple[FormField, ...]
    open: bool = False


@dataclass(frozen=True)
class PluginForm:
    plugin: str
    sections: tuple[FormSection, ...]
    names: frozenset[str] = field(default_factory=frozenset)  # every setting a field of the form stands for


def _field(check: FieldCheck) -> FormField:
    d = check.definition
    return FormField(name=d.name, label=d.display_name or d.name, type=d.type, required=d.required,
                     default=d.default_value, importance=d.importance, documentation=d.documentation,
                     recommended=check.recommended)


def plugin_form(validation: ConfigValidation, *, plugin_label: str, open_names: frozenset[str] = frozenset()
                ) -> PluginForm:
    """Sections of the form: first the essentials (the required and the important settings: the name, the
    plugin's own, tasks.max, topics), open; then each of Connect's groups with the rest, closed unless one of
    `open_names` (settings with a value or a problem) is in it. Within a section, Connect's order: its groups as
    listed, then order in group; the plugin's own ungrouped settings come right after the name."""
    groups = {name: i for i, name in enumerate(validation.groups)}
    checks = [c for c in validation.fields if c.definition.name not in FIXED and c.visible]
    seen: set[str] = set()
    unique = []
    for check in checks:  # one field per setting, whatever the answer repeats
        if check.definition.name not in seen:
            seen.add(check.definition.name)
            unique.append(check)

    def place(check: FieldCheck) -> tuple:
        d = check.definition
        name_first = d.name != "name"
        group = d.group or OWN_GROUP
        rank = -1 if group == OWN_GROUP else groups.get(group, len(groups))
        return name_first, rank, d.order, d.name

    ordered = sorted(unique, key=place)
    fields = [_field(c) for c in ordered]
    essentials = tuple(f for f in fields if f.essential)
    sections = [FormSection(f"{plugin_label} settings" if not essentials else "Essentials", essentials, open=True)]
    rest: dict[str, list[FormField]] = {}
    for check, form_field in zip(ordered, fields):
        if not form_field.essential:
            rest.setdefault(check.definition.group or f"{plugin_label} settings", []).append(form_field)
    for title, grouped in rest.items():
        sections.append(FormSection(title, tuple(grouped), open=any(f.name in open_names for f in grouped)))
    return PluginForm(plugin=validation.plugin, sections=tuple(s for s in sections if s.fields),
                      names=frozenset(seen))
