"""A record as an export writes it: its bytes exactly as Kafka holds them (what an import writes back), and beside
them, for reading only, the decoded form where a schema or JSON applies. For a reader whom masking rules cover,
every part a rule could touch carries the masked text instead of its bytes, so no masked byte reaches the file;
the row lists those parts."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from gateway.kafka.types import DecodedPart, RecordInfo
from masking.apply import JSON_KINDS, mask_row
from masking.mask_rules import Masker
from records.selectors import record_row
from topics.decoding import Decoded, json_of


@dataclass(frozen=True)
class ExportRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    decoded: dict = field(default_factory=dict)  # "key"/"value": the JSON a schema or the bytes themselves give
    schema: dict = field(default_factory=dict)  # "key"/"value": the registry schema that decoded it
    masked: tuple[str, ...] = ()  # "key", "value", "header:NAME": parts written as their masked text


def _view(part: Decoded, data: bytes | None) -> object:
    """The decoded form of a key or value, or None where the bytes say it all (text, binary, null)."""
    if part.kind in ("avro", "protobuf", "json-schema"):
        return part.value
    if part.kind == "json" and data is not None:
        return json_of(data.decode("utf-8"))
    return None


def _schema(part: Decoded) -> dict | None:
    schema = part.schema
    if schema is None:
        return None
    return {"subject": schema.subject, "version": schema.version, "id": schema.schema_id, "type": schema.schema_type}


def _masked_bytes(part: Decoded) -> bytes | None:
    """The bytes that stand for a masked part: its masked text, compact JSON for decoded values."""
    if part.kind == "null":
        return None
    if part.kind in JSON_KINDS and not isinstance(part.value, str):
        return json.dumps(part.value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return part.text.encode("utf-8")


def export_record(record: RecordInfo, key: DecodedPart | None, value: DecodedPart | None,
                  masker: Masker | None = None) -> ExportRecord:
    """The export's row of a record (`key`/`value`: the registry's decoding, if any), masked for `masker`."""
    row = record_row(record, key, value, max_chars=None)
    key_bytes, value_bytes, headers, masked = record.key, record.value, tuple(record.headers), []
    if masker:
        shown, regex = mask_row(masker, replace(row, headers=[])), bool(masker.regexes)
        if (masker.key_rules or regex) and record.key is not None:
            key_bytes, row = _masked_bytes(shown.key), replace(row, key=shown.key)
            masked.append("key")
        if (masker.paths or regex) and record.value is not None:
            value_bytes, row = _masked_bytes(shown.value), replace(row, value=shown.value)
            masked.append("value")
        kept_headers = []
        for (name, data), (_, part) in zip(record.headers, row.headers, strict=True):
            if data is None or not (regex or name in masker.header_rules):
                kept_headers.append((name, data))
                continue
            masked.append(f"header:{name}")
            kept, text = masker.header(name, part.text)
            if kept:
                kept_headers.append((name, (text or "").encode("utf-8")))
        headers = tuple(kept_headers)
    decoded = {side: view for side, part, data in (("key", row.key, key_bytes), ("value", row.value, value_bytes))
               if (view := _view(part, data)) is not None}
    schema = {side: found for side, part in (("key", row.key), ("value", row.value))
              if (found := _schema(part)) is not None}
    return ExportRecord(topic=record.topic, partition=record.partition, offset=record.offset,
                        timestamp=record.timestamp, timestamp_type=record.timestamp_type, key=key_bytes,
                        value=value_bytes, headers=headers, decoded=decoded, schema=schema,
                        masked=tuple(dict.fromkeys(masked)))
