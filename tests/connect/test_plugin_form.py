"""The create form built from Connect's definition of a plugin (connect/plugin_form.py), on a validation answer shaped
as Connect gives one: framework settings in groups, the plugin's own without a group."""

from connect.plugin_form import plugin_form
from gateway.kafka_connect.types import ConfigDefinition, ConfigValidation, FieldCheck


def check(name, group, order, *, type="STRING", required=False, importance="LOW", default=None, recommended=(),
          visible=True):
    definition = ConfigDefinition(name=name, type=type, required=required, default_value=default,
                                  importance=importance, documentation=f"what {name} does", group=group,
                                  display_name=name.title(), order=order)
    return FieldCheck(definition=definition, value=None, errors=(), recommended=recommended, visible=visible)


VALIDATION = ConfigValidation(
    plugin="org.example.SinkConnector", error_count=2, groups=("Common", "Transforms", "Error Handling"),
    fields=(
        check("errors.tolerance", "Error Handling", 3, default="none", importance="MEDIUM"),
        check("name", "Common", 1, required=True, importance="HIGH"),
        check("connector.class", "Common", 2, required=True, importance="HIGH"),
        check("tasks.max", "Common", 4, type="INT", default="1", importance="HIGH"),
        check("key.converter", "Common", 6, type="CLASS", recommended=("a.Json", "a.String")),
        check("transforms", "Transforms", 12, type="LIST", default=""),
        check("errors.retry.timeout", "Error Handling", 1, type="LONG", default="0", importance="MEDIUM"),
        check("topics", "Common", 4, type="LIST", default="", importance="HIGH"),
        check("file", None, -1, importance="HIGH"),
        check("batch.size", None, -1, type="INT", default="2000"),
        check("topics", "Common", 4, type="LIST", default="", importance="HIGH"),  # repeated: still one field
        check("hidden.one", "Common", 20, visible=False),
    ))


def _names(section):
    return [f.name for f in section.fields]


def test_each_setting_once_in_connects_groups_and_order_essentials_first():
    form = plugin_form(VALIDATION, plugin_label="SinkConnector")
    assert [(s.title, s.open) for s in form.sections] == [
        ("Essentials", True), ("SinkConnector settings", False), ("Common", False), ("Transforms", False),
        ("Error Handling", False)]
    essentials, own, common, transforms, errors = form.sections
    assert _names(essentials) == ["name", "file", "tasks.max", "topics"]  # the plugin's own right after the name
    assert (_names(own), _names(common), _names(transforms)) == (["batch.size"], ["key.converter"], ["transforms"])
    assert _names(errors) == ["errors.retry.timeout", "errors.tolerance"]
    every = [f.name for s in form.sections for f in s.fields]
    assert len(every) == len(set(every)) and "connector.class" not in every and "hidden.one" not in every
    assert form.names == frozenset(every)


def test_a_field_carries_what_connect_says_of_it():
    form = plugin_form(VALIDATION, plugin_label="SinkConnector")
    fields = {f.name: f for s in form.sections for f in s.fields}
    assert fields["name"].required and fields["name"].input_name == "cfg:name"
    assert fields["tasks.max"].number and fields["tasks.max"].default == "1"
    assert fields["key.converter"].recommended == ("a.Json", "a.String")
    assert fields["file"].documentation == "what file does" and fields["file"].label == "File"


def test_groups_holding_a_value_or_a_problem_open():
    form = plugin_form(VALIDATION, plugin_label="SinkConnector", open_names=frozenset({"errors.tolerance"}))
    assert [s.title for s in form.sections if s.open] == ["Essentials", "Error Handling"]
