"""The database's chain against the witness topic's: pure, streaming (both sides in seq order, read once).

The topic is trusted where its records carry a valid keyed hash and rise in seq order; every other record of it
is reported and left out. Against it, each database row is one of:
- in both and equal: fine;
- in both and different (hash or any field): CHANGED;
- only in the topic: MISSING_ROW, or MISSING_TAIL when no database row comes after it (the newest rows removed);
- only in the database, within the topic's range: UNSEEN (inserted: the publisher never saw it);
- only in the database, before the topic's first record: fine where `absence_explained` says so (the topic's
  retention dropped it, or a reset accepted it), else PURGED (removed from the topic's front);
- after the topic's last record (not published yet): fine if it continues the chain from that record, else
  UNCHAINED.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from console.audit.chain import GENESIS_HASH
from console.witness.records import Link


class Kind(StrEnum):
    MISSING_TAIL = "missing-tail"
    MISSING_ROW = "missing-row"
    CHANGED = "changed"
    UNSEEN = "unseen"
    UNCHAINED = "unchained"
    WITNESS_INVALID = "witness-invalid"
    WITNESS_UNREADABLE = "witness-unreadable"  # its ranges are topic offsets: such records carry no seq
    PURGED = "purged"
    WITNESS_LOST = "witness-lost"  # from the high-water mark (console.witness.loss), not from the records


MESSAGES = {
    Kind.MISSING_TAIL: "{seqs}: published to the witness, missing at the end of the database (newest rows removed)",
    Kind.MISSING_ROW: "{seqs}: published to the witness, missing from the database",
    Kind.CHANGED: "{seqs}: differs from what the witness holds (hash or content changed in the database)",
    Kind.UNSEEN: "{seqs}: in the database within the witnessed range, never seen by the witness (inserted)",
    Kind.UNCHAINED: "{seqs}: not published yet and does not continue the chain (inserted or altered)",
    Kind.WITNESS_INVALID: "witness record(s) {seqs}: not genuine or out of order, left out of the comparison",
    Kind.WITNESS_UNREADABLE: "witness offset(s) {seqs}: not audit events of this console, left out of the comparison",
    Kind.PURGED: ("{seqs}: older than the witness topic's first record, and its retention does not explain their "
                  "absence (records purged from the topic)"),
    Kind.WITNESS_LOST: ("{seqs}: the witness topic lost these published records (purged, deleted or re-created); "
                        "publishing has stopped until `manage.py audit_witness_reset`"),
}
_SHOWN_RANGES = 20


def seq_ranges(seqs: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted, distinct seqs folded into runs: [3, 4, 5, 9] -> [(3, 5), (9, 9)]."""
    runs: list[tuple[int, int]] = []
    for seq in sorted(set(seqs)):
        if runs and seq == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return runs


def format_ranges(ranges: list[tuple[int, int]]) -> str:
    shown = ", ".join(f"#{a}" if a == b else f"#{a}-#{b}" for a, b in ranges[:_SHOWN_RANGES])
    more = len(ranges) - _SHOWN_RANGES
    return shown + (f" and {more} more run(s)" if more > 0 else "")


@dataclass(frozen=True)
class Finding:
    kind: Kind
    ranges: tuple[tuple[int, int], ...]

    @property
    def seqs(self) -> list[int]:
        return [seq for first, last in self.ranges for seq in range(first, last + 1)]

    @property
    def message(self) -> str:
        return MESSAGES[self.kind].format(seqs=format_ranges(list(self.ranges)))

    def as_json(self) -> dict:
        return {"kind": str(self.kind), "ranges": [list(r) for r in self.ranges], "message": self.message}


@dataclass
class Comparison:
    findings: list[Finding] = field(default_factory=list)
    events: int = 0  # database rows read
    witness_records: int = 0  # trusted topic records read
    witness_first_seq: int | None = None
    witness_last_seq: int | None = None
    unpublished: int = 0  # database rows after the topic's last record
    expired: int = 0  # database rows before the topic's first record whose absence is explained
    db_last_seq: int | None = None

    @property
    def ok(self) -> bool:
        return not self.findings


def _trusted(witness: Iterable[Link], rejected: list[int]) -> Iterator[Link]:
    last = 0
    for link in witness:
        if not link.hash_ok or link.seq <= last:
            rejected.append(link.seq)
            continue
        last = link.seq
        yield link


def _always(link: Link) -> bool:
    return True


def compare(db: Iterable[Link], witness: Iterable[Link], *, unreadable_offsets: Iterable[int] = (),
            absence_explained: Callable[[Link], bool] = _always) -> Comparison:
    """Both sides in ascending seq order (the database's unique seq; the topic's offsets). `unreadable_offsets`:
    topic records that are no audit event at all; reading `witness` may add to it, so it is looked at last.
    `absence_explained`: whether a row before the topic's first record may be absent from it."""
    found: dict[Kind, list[int]] = {kind: [] for kind in Kind}
    result = Comparison()
    rows, records = iter(db), _trusted(witness, found[Kind.WITNESS_INVALID])
    row, record = next(rows, None), next(records, None)
    last_witnessed: Link | None = None
    result.witness_first_seq = record.seq if record is not None else None
    while record is not None:
        if row is not None and row.seq < record.seq:
            if last_witnessed is not None:
                found[Kind.UNSEEN].append(row.seq)
            elif absence_explained(row):
                result.expired += 1
            else:
                found[Kind.PURGED].append(row.seq)
            result.events += 1
            result.db_last_seq = row.seq
            row = next(rows, None)
            continue
        if row is None:
            found[Kind.MISSING_TAIL].append(record.seq)
        elif row.seq > record.seq:
            found[Kind.MISSING_ROW].append(record.seq)
        else:
            if row.hash != record.hash or row.body != record.body:
                found[Kind.CHANGED].append(row.seq)
            result.events += 1
            result.db_last_seq = row.seq
            row = next(rows, None)
        result.witness_records += 1
        last_witnessed, record = record, next(records, None)
    prev_seq, prev_hash = (last_witnessed.seq, last_witnessed.hash) if last_witnessed else (0, GENESIS_HASH)
    result.witness_last_seq = last_witnessed.seq if last_witnessed else None
    while row is not None:
        result.events += 1
        result.unpublished += 1
        result.db_last_seq = row.seq
        if row.seq != prev_seq + 1 or row.prev_hash != prev_hash or not row.hash_ok:
            found[Kind.UNCHAINED].append(row.seq)
        prev_seq, prev_hash, row = row.seq, row.hash, next(rows, None)
    found[Kind.WITNESS_UNREADABLE] = list(unreadable_offsets)
    result.findings = [Finding(kind, tuple(seq_ranges(seqs))) for kind, seqs in found.items() if seqs]
    return result
