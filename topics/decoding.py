"""How a record's key, value and headers are shown: decoded through the schema registry when they are in its wire
format, else JSON when they parse, text when UTF-8, hex otherwise."""

from __future__ import annotations

import json
from dataclasses import dataclass

from console.kafka.types import DecodedPart, SchemaInfo

BOM = "\ufeff"


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


def present(data: bytes | None, decoded: DecodedPart | None, *, max_chars: int | None = 10_000) -> Decoded:
    """A key or value for people: the registry's decoding when there is one, else decode_bytes. `max_chars` cuts
    what a page shows; None shows it whole (a file written out, never a page)."""
    if decoded is None:
        return decode_bytes(data, max_chars=max_chars)
    if decoded.kind == "hex":
        plain = decode_bytes(data, max_chars=max_chars)
        shown = (data or b"") if max_chars is None else (data or b"")[: max_chars // 2]
        return Decoded("hex", plain.text if plain.kind == "hex" else shown.hex(" "),
                       schema=decoded.schema, error=decoded.error)
    text = json.dumps(decoded.value, indent=2, ensure_ascii=False)
    fits = max_chars is None or len(text) <= max_chars
    return Decoded(decoded.kind, text if fits else json.dumps(decoded.value, ensure_ascii=False),
                   schema=decoded.schema)


def json_of(text: str) -> object:
    """The JSON a text holds, or None. A byte-order mark before it does not make it something else: masking
    rules over JSON paths must see such a value as JSON too."""
    try:
        return json.loads(text.removeprefix(BOM))
    except ValueError:
        return None


def decode_bytes(data: bytes | None, *, max_chars: int | None = 10_000) -> Decoded:
    if data is None:
        return Decoded("null", "")
    if not data:
        return Decoded("empty", "")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        if max_chars is None or len(data) * 2 <= max_chars:
            return Decoded("hex", data.hex(" "))
        return Decoded("hex", data[: max_chars // 2].hex(" ") + " …")
    cut = len(text) if max_chars is None else max_chars
    parsed = json_of(text)
    # Bare numbers and strings parse as JSON too, but showing them "as JSON" adds nothing.
    if isinstance(parsed, dict | list):
        pretty = json.dumps(parsed, indent=2, ensure_ascii=False, sort_keys=False)
        return Decoded("json", pretty if max_chars is None else pretty[:max_chars])
    return Decoded("text", text[:cut])
