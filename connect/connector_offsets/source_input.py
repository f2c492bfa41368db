"""A source connector's offsets as a person edits them: JSON as GET /connectors/{name}/offsets prints it (the whole
object, or its "offsets" list), checked as Connect checks it before anything is sent (KIP-875: each entry a
"partition" object and an "offset" object, or null to delete that partition's offset, both flat maps of strings,
numbers, booleans and nulls). Pure: no Django, no Connect."""

from __future__ import annotations

import json

from gateway.kafka_connect.types import OffsetEntry

MSG_NOT_JSON = "The offsets are not JSON: {error}."
MSG_SHAPE = 'The offsets are a list of {"partition": {...}, "offset": {...}} objects (or that list under "offsets").'
MSG_ENTRY = 'Entry {index} must be an object with exactly "partition" and "offset".'
MSG_PARTITION = 'Entry {index}: "partition" must be a non-empty object.'
MSG_OFFSET = 'Entry {index}: "offset" must be an object, or null to delete the partition\'s offset.'
MSG_VALUE = ('Entry {index}: "{where}" key {key!r} holds {kind}; Connect keeps only strings, numbers, booleans and '
             'nulls there.')
MSG_DUPLICATE = "Entries {first} and {second} name the same partition."
MSG_EMPTY = "Give at least one partition's offset."


def _flat(index: int, where: str, mapping: dict) -> None:
    for key, value in mapping.items():
        if not (value is None or isinstance(value, str | int | float | bool)):
            raise ValueError(MSG_VALUE.format(index=index, where=where, key=key, kind=type(value).__name__))


def parse_source_offsets(text: str) -> list[OffsetEntry]:
    """Entries in the order given; ValueError with a message for people on the first problem."""
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise ValueError(MSG_NOT_JSON.format(error=exc)) from None
    if isinstance(parsed, dict) and set(parsed) == {"offsets"}:
        parsed = parsed["offsets"]
    if not isinstance(parsed, list):
        raise ValueError(MSG_SHAPE)
    if not parsed:
        raise ValueError(MSG_EMPTY)
    entries: list[OffsetEntry] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(parsed, start=1):
        if not isinstance(item, dict) or set(item) != {"partition", "offset"}:
            raise ValueError(MSG_ENTRY.format(index=index))
        partition, offset = item["partition"], item["offset"]
        if not isinstance(partition, dict) or not partition:
            raise ValueError(MSG_PARTITION.format(index=index))
        if offset is not None and not isinstance(offset, dict):
            raise ValueError(MSG_OFFSET.format(index=index))
        _flat(index, "partition", partition)
        _flat(index, "offset", offset or {})
        entry = OffsetEntry(partition, offset)
        if entry.key in seen:
            raise ValueError(MSG_DUPLICATE.format(first=seen[entry.key], second=index))
        seen[entry.key] = index
        entries.append(entry)
    return entries


def offsets_text(entries: list[OffsetEntry]) -> str:
    """What the edit box starts with: the current offsets, one entry a line."""
    lines = [json.dumps(entry.as_rest(), sort_keys=True) for entry in entries]
    return "[\n  " + ",\n  ".join(lines) + "\n]" if lines else "[]"
