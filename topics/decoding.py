"""How a record's key, value and headers are shown: decoded through the schema registry when they are in its wire
format, else JSON when they parse, text when UTF-8 with nothing invisible in it, hex otherwise."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from gateway.kafka.types import DecodedPart, SchemaInfo

BOM = "\ufeff"
JSON_KINDS = ("avro", "protobuf", "json-schema", "json")
PREVIEW_CHARS = 240
# Control characters other than tab, newline and carriage return: valid UTF-8, but a page shows them as nothing
# at all (a 2-byte counter key read as "text" was a blank cell), so bytes holding one are binary for people.
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Decoded:
    kind: str  # avro, protobuf, json-schema, json, text, hex, null, empty
    text: str
    schema: SchemaInfo | None = None  # the registry schema it was decoded with (or failed to decode with)
    error: str = ""  # why a record in the registry's wire format shows as hex

    @property
    def is_json(self) -> bool:
        """Decoded JSON (registry records too): shown as a tree when expanded."""
        return self.kind in JSON_KINDS

    @property
    def preview(self) -> str:
        """One line for a list: JSON written compactly, runs of white space as one space, cut to a few hundred
        characters (the whole text is in the record's expanded view)."""
        text = self.text
        if self.kind in JSON_KINDS:
            parsed = json_of(text)
            if parsed is not None:
                text = json.dumps(parsed, ensure_ascii=False, separators=(", ", ": "))
        text = _SPACES.sub(" ", text[: PREVIEW_CHARS * 4]).strip()
        return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"

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
        return Decoded("hex", _hex(data or b"", max_chars), schema=decoded.schema, error=decoded.error)
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
        return Decoded("hex", _hex(data, max_chars))
    if _INVISIBLE.search(text):
        return Decoded("hex", _hex(data, max_chars))
    cut = len(text) if max_chars is None else max_chars
    parsed = json_of(text)
    # Bare numbers and strings parse as JSON too, but showing them "as JSON" adds nothing.
    if isinstance(parsed, dict | list):
        pretty = json.dumps(parsed, indent=2, ensure_ascii=False, sort_keys=False)
        if max_chars is None or len(pretty) <= max_chars:
            return Decoded("json", pretty)
        # Compact JSON may still fit whole, and a whole document can be shown as a tree; a cut one cannot.
        return Decoded("json", json.dumps(parsed, ensure_ascii=False)[:max_chars])
    return Decoded("text", text[:cut])


def _hex(data: bytes, max_chars: int | None) -> str:
    """Bytes as hex pairs, cut to about `max_chars` characters (None: whole)."""
    if max_chars is None or len(data) * 2 <= max_chars:
        return data.hex(" ")
    return data[: max_chars // 2].hex(" ") + " …"
