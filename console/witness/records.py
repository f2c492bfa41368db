"""An audit event as the witness topic holds it: key the seq in decimal, value one JSON object with the hashed
fields (console.audit.chain.HASHED_FIELDS) and the hash, so anyone holding AUDIT_HASH_KEY can check a record
from the topic alone. The JSON-lines export writes the same objects."""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from console.audit.chain import HASHED_FIELDS, event_fields, fields_hash
from gateway.kafka.types import RecordInfo


@dataclass(frozen=True)
class Link:
    """One event of the chain, from the database or from the topic, in the form both are compared in."""

    seq: int
    hash: str
    prev_hash: str
    body: Mapping = field(default_factory=dict, compare=False)  # every field, as JSON gives it back
    hash_ok: bool = True  # its keyed hash matches its fields


class NotAWitnessRecord(ValueError):
    pass


def event_body(event) -> dict:
    return {**event_fields(event), "hash": event.hash}


def event_json(event) -> str:
    return json.dumps(event_body(event), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def event_record(event) -> tuple[bytes, bytes]:
    return str(event.seq).encode(), event_json(event).encode()


def _hash_ok(body: Mapping) -> bool:
    return hmac.compare_digest(str(body.get("hash", "")), fields_hash({name: body.get(name) for name in HASHED_FIELDS}))


def event_link(event) -> Link:
    """The database row as the topic would hold it (through JSON, so both sides compare alike)."""
    body = json.loads(event_json(event))
    return Link(seq=event.seq, hash=event.hash, prev_hash=event.prev_hash, body=body, hash_ok=_hash_ok(body))


def record_link(record: RecordInfo) -> Link:
    """Raises NotAWitnessRecord for a record this console did not write (no JSON object, fields missing)."""
    try:
        body = json.loads(record.value or b"")
    except (UnicodeDecodeError, ValueError) as exc:
        raise NotAWitnessRecord(f"offset {record.offset}: not JSON") from exc
    missing = [name for name in (*HASHED_FIELDS, "hash") if not isinstance(body, dict) or name not in body]
    if missing or not isinstance(body["seq"], int) or record.key != str(body["seq"]).encode():
        raise NotAWitnessRecord(f"offset {record.offset}: not an audit event")
    return Link(seq=body["seq"], hash=str(body["hash"]), prev_hash=str(body["prev_hash"]), body=body,
                hash_ok=_hash_ok(body))
