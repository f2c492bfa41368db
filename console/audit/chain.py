"""The hash chain: each row's hash covers its own fields and the previous row's hash.

HMAC-SHA256 keyed with settings.AUDIT_HASH_KEY, so someone with write access to the database but not the
key cannot forge a row or re-chain the rows after one they altered or removed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings

GENESIS_HASH = "0" * 64

HASHED_FIELDS = (
    "seq", "created_at", "actor_id", "actor_name", "source", "remote_addr", "cluster", "action", "target",
    "reason", "params", "before", "after", "outcome", "error", "correlation_id", "prev_hash",
)


def canonical(fields: dict) -> bytes:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def event_fields(event) -> dict:
    values = {name: getattr(event, name) for name in HASHED_FIELDS}
    values["created_at"] = event.created_at.isoformat(timespec="microseconds")
    values["correlation_id"] = str(event.correlation_id)
    return values


def fields_hash(fields: dict) -> str:
    """The keyed hash of an event's HASHED_FIELDS, as event_fields gives them (or as the witness topic holds them)."""
    key = settings.AUDIT_HASH_KEY.encode()
    return hmac.new(key, canonical(fields), hashlib.sha256).hexdigest()


def event_hash(event) -> str:
    return fields_hash(event_fields(event))


@dataclass(frozen=True)
class ChainReport:
    count: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_chain(events: Iterable) -> ChainReport:
    """Walks events in sequence order: a gap means a removed row, a bad link or hash an altered or inserted one."""
    problems: list[str] = []
    expected_seq, prev_hash, count = 1, GENESIS_HASH, 0
    for event in events:
        count += 1
        if event.seq != expected_seq:
            problems.append(f"event #{event.seq}: expected sequence number {expected_seq} (rows removed or inserted)")
        if event.prev_hash != prev_hash:
            problems.append(f"event #{event.seq}: does not link to the previous event's hash")
        if not hmac.compare_digest(event.hash, event_hash(event)):
            problems.append(f"event #{event.seq}: hash does not match its content (row altered)")
        expected_seq, prev_hash = event.seq + 1, event.hash
    return ChainReport(count=count, problems=tuple(problems))
