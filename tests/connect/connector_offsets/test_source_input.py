"""connect/connector_offsets/source_input.py: a source connector's offsets as a person writes them, checked before Connect."""

import json

import pytest

from connect.connector_offsets import source_input as si


def test_the_list_and_the_rest_object_both_read():
    entry = {"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": 12}}
    assert si.parse_source_offsets(json.dumps([entry]))[0].as_rest() == entry
    assert si.parse_source_offsets(json.dumps({"offsets": [entry]}))[0].as_rest() == entry
    deleted = si.parse_source_offsets(json.dumps([{"partition": {"f": 1}, "offset": None}]))
    assert deleted[0].offset is None


@pytest.mark.parametrize(("text", "message"), [
    ("{", si.MSG_NOT_JSON.split(":")[0]),
    ('{"a": 1}', si.MSG_SHAPE),
    ("[]", si.MSG_EMPTY),
    ('[{"partition": {"a": 1}}]', si.MSG_ENTRY.format(index=1)),
    ('[{"partition": {}, "offset": {}}]', si.MSG_PARTITION.format(index=1)),
    ('[{"partition": {"a": 1}, "offset": 3}]', si.MSG_OFFSET.format(index=1)),
    ('[{"partition": {"a": [1]}, "offset": {}}]', "holds list"),
    ('[{"partition": {"a": 1}, "offset": {"p": {"x": 1}}}]', "holds dict"),
    ('[{"partition": {"a": 1}, "offset": {}}, {"partition": {"a": 1}, "offset": null}]',
     si.MSG_DUPLICATE.format(first=1, second=2)),
])
def test_what_connect_would_refuse_is_refused_with_the_entry_named(text, message):
    with pytest.raises(ValueError) as caught:
        si.parse_source_offsets(text)
    assert message in str(caught.value)


def test_the_edit_box_text_reads_back_as_the_same_entries():
    entries = si.parse_source_offsets('[{"partition": {"filename": "a b/ü"}, "offset": {"position": 1}}]')
    assert si.parse_source_offsets(si.offsets_text(entries)) == entries
