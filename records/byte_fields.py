"""A record's bytes (key, value, header values) in a text file and back, exactly: bytes that are UTF-8 text are
written as that text (readable, and a JSON value keeps its own spacing), any other bytes as base64 (so are
UTF-8 bytes holding control characters other than tab and line breaks: a schema registry's framing, say), and the
encoding is written beside them so that an import knows which. Null stays apart from empty: a null has no
encoding, empty bytes have one. Pure."""

from __future__ import annotations

import base64
import binascii
import re

UTF8, BASE64 = "utf8", "base64"
ENCODINGS = (UTF8, BASE64)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MSG_BAD_ENCODING = "{what}_encoding {encoding!r} is not one of utf8, base64"
MSG_BAD_BASE64 = "{what} is not base64 ({detail})"
MSG_NOT_TEXT = "{what} is not text in its encoding"
MSG_NULL_ENCODED = "{what} is null but says it is encoded as {encoding!r}"


class FieldRefused(ValueError):
    """A field whose bytes cannot be read back; the message names the field."""


def bytes_to_field(data: bytes | None) -> tuple[str | None, str | None]:
    """(text, encoding) for a file; (None, None) for null."""
    if data is None:
        return None, None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and not _CONTROL.search(text):
        return text, UTF8
    return base64.b64encode(data).decode("ascii"), BASE64


def field_to_bytes(text: object, encoding: object, *, what: str) -> bytes | None:
    """The bytes a field written by bytes_to_field stands for. Raises FieldRefused with the field's name."""
    if encoding in (None, ""):
        if text is not None:
            raise FieldRefused(MSG_BAD_ENCODING.format(what=what, encoding=encoding))
        return None
    if encoding not in ENCODINGS:
        raise FieldRefused(MSG_BAD_ENCODING.format(what=what, encoding=encoding))
    if text is None:
        raise FieldRefused(MSG_NULL_ENCODED.format(what=what, encoding=encoding))
    if not isinstance(text, str):
        raise FieldRefused(MSG_NOT_TEXT.format(what=what))
    if encoding == UTF8:
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate from a \ud800 escape: no bytes stand for it
            raise FieldRefused(MSG_NOT_TEXT.format(what=what)) from exc
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise FieldRefused(MSG_BAD_BASE64.format(what=what, detail=str(exc) or type(exc).__name__)) from exc
