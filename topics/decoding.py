"""How a record's key, value and headers are shown: decoded through the schema registry when they are in its wire
format, else JSON when they parse, text when UTF-8, hex otherwise."""

from __future__ import annotations

import json
from dataclasses import dataclass

from console.kafka.types import DecodedPart, SchemaInfo


@dataclass(frozen=True)
class Decoded:
    kind: str  # avro, protobuf, json-schema, json, text, hex, null, empty
    text: str
    schema: SchemaInfo | None = None  # the registry schema it was decoded with (or failed to decode with)
    error: str = ""  # why a record in the registry's wire format shows as hex

    @property
    def value(self) -> object:
        """The JSON value for the shell's --format json: decoded records as objects, else the text."""
        if self.kind in ("avro", "protobuf", "json-schema", "json"):
            try:
                return json.loads(self.text)
            except ValueError:  # cut at max_chars
                return self.text
        return None if self.kind == "null" else self.text


def present(data: bytes | None, decoded: DecodedPart | None, *, max_chars: int = 10_000) -> Decoded:
    """A key or value for people: the registry's decoding when there is one, else decode_bytes."""
    if decoded is None:
        return decode_bytes(data, max_chars=max_chars)
    if decoded.kind == "hex":
        plain = decode_bytes(data, max_chars=max_chars)
        return Decoded("hex", plain.text if plain.kind == "hex" else (data or b"")[: max_chars // 2].hex(" "),
                       schema=decoded.schema, error=decoded.error)
    text = json.dumps(decoded.value, indent=2, ensure_ascii=False)
    return Decoded(decoded.kind, text if len(text) <= max_chars else json.dumps(decoded.value, ensure_ascii=False),
                   schema=decoded.schema)


def decode_bytes(data: bytes | None, *, max_chars: int = 10_000) -> Decoded:
    if data is None:
        return Decoded("null", "")
    if not data:
        return Decoded("empty", "")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        hexed = data[: max_chars // 2].hex(" ")
        return Decoded("hex", hexed + (" …" if len(data) * 2 > max_chars else ""))
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    # Bare numbers and strings parse as JSON too, but showing them "as JSON" adds nothing.
    if isinstance(parsed, dict | list):
        pretty = json.dumps(parsed, indent=2, ensure_ascii=False, sort_keys=False)
        return Decoded("json", pretty[:max_chars])
    return Decoded("text", text[:max_chars])
