"""A topic search from the caller's side: the range resolved to offsets once, then bounded steps that carry their
state with them (a signed token for the page, a loop for the shell), each a chunk of the gateway's scan.

No consumer group, nothing committed. The range is fixed when the search begins, so "scanned of the range" is
exact and a search over a busy topic ends."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from dataclasses import asdict, dataclass, field, replace

from django.conf import settings
from django.core import signing

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.types import EARLIEST, LATEST, STABLE, PartitionRef, ScanCursor, ScanFilter, ScanMatch, ScanRequest

MSG_NO_PARTITION = "Topic '{topic}' has no partition {partition}."
MSG_BAD_STATE = "This search's state was not recognised (changed or from another server); start it again."
TOKEN_SALT = "records.search"
STEP_S = 1.0  # the page's step: short enough that a poll never ties up a web thread for long


@dataclass(frozen=True)
class Bound:
    """Where a search starts or ends: "earliest"/"latest", an offset (every chosen partition), or a time (ms)."""

    kind: str
    value: int = 0


@dataclass(frozen=True)
class SearchSpec:
    topic: str
    partitions: tuple[int, ...] | None = None
    start: Bound = Bound("earliest")
    end: Bound = Bound("latest")
    filter: ScanFilter = ScanFilter()
    newest_first: bool = False
    isolation: str = "read_committed"
    max_records: int = 10_000_000
    max_seconds: float = 60.0
    max_matches: int = 500


@dataclass
class SearchState:
    cluster: str
    spec: SearchSpec
    scan_id: str
    cursors: tuple[ScanCursor, ...]
    started_at: float = field(default_factory=time.time)
    scanned: int = 0
    matched: int = 0
    done: bool = False
    ended_because: str = ""  # "", "range", "records budget", "time budget", "match limit", "stopped"

    @property
    def total(self) -> int:
        """Offsets in the range (transaction markers and compacted-away offsets count, as Kafka counts lag)."""
        return sum(c.total for c in self.cursors)

    @property
    def covered(self) -> int:
        if self.spec.newest_first:
            return sum(c.high - max(c.next, c.low) for c in self.cursors)
        return sum(min(c.next, c.high) - c.low for c in self.cursors)

    @property
    def percent(self) -> float:
        return 100.0 if not self.total else round(100.0 * self.covered / self.total, 1)

    @property
    def elapsed(self) -> float:
        return max(0.0, time.time() - self.started_at)

    @property
    def rate(self) -> int:
        return int(self.scanned / self.elapsed) if self.elapsed > 0 else 0

    def token(self) -> str:
        return signing.dumps(asdict(self), salt=TOKEN_SALT, compress=True)

    @classmethod
    def from_token(cls, token: str) -> SearchState:
        try:
            raw = signing.loads(token, salt=TOKEN_SALT)
            spec = raw["spec"]
            spec = SearchSpec(**{**spec, "partitions": tuple(spec["partitions"]) if spec["partitions"] else None,
                                 "start": Bound(**spec["start"]), "end": Bound(**spec["end"]),
                                 "filter": ScanFilter(**{**spec["filter"], "value_fields": tuple(
                                     tuple(pair) for pair in spec["filter"]["value_fields"])})})
            return cls(**{**raw, "spec": spec, "cursors": tuple(ScanCursor(**c) for c in raw["cursors"])})
        except (signing.BadSignature, KeyError, TypeError, ValueError) as exc:
            raise ConsoleError(MSG_BAD_STATE) from exc


def _offsets_at(admin, refs: list[PartitionRef], bound: Bound, *, start: bool, fallback: dict, low: dict,
                high: dict) -> dict[PartitionRef, int]:
    if bound.kind in ("earliest", "latest"):
        return dict(fallback)
    if bound.kind == "offset":
        return {r: min(max(bound.value, low[r]), high[r]) for r in refs}
    # A time: the first offset whose timestamp is at or after it; an end time keeps the records of its own
    # millisecond, so the range ends before the first record after it.
    at = bound.value if start else bound.value + 1
    found = admin.list_offsets(refs, at)
    return {r: (high[r] if found[r].offset < 0 else min(max(found[r].offset, low[r]), high[r])) for r in refs}


def search_begin(cluster: str, spec: SearchSpec) -> SearchState:
    """Resolves the range to offsets: from the bound (or the log start) to the bound (or the log end; for
    read_committed the last stable offset, past which a reader would wait)."""
    admin = cluster_admin(cluster)
    described = admin.describe_topics([spec.topic])[spec.topic]
    known = sorted(p.partition for p in described.partitions)
    chosen = list(spec.partitions) if spec.partitions else known
    for partition in chosen:
        if partition not in known:
            raise ConsoleError(MSG_NO_PARTITION.format(topic=spec.topic, partition=partition))
    refs = [PartitionRef(spec.topic, p) for p in chosen]
    ats: list = [EARLIEST, LATEST] + ([STABLE] if spec.isolation == "read_committed" else [])
    found = admin.list_offsets_many(refs, ats)
    low = {r: found[EARLIEST][r].offset for r in refs}
    high = {r: min(found[LATEST][r].offset, found[STABLE][r].offset) if STABLE in found else found[LATEST][r].offset
            for r in refs}
    starts = _offsets_at(admin, refs, spec.start, start=True, fallback=low, low=low, high=high)
    ends = _offsets_at(admin, refs, spec.end, start=False, fallback=high, low=low, high=high)
    cursors = []
    for r in refs:
        lo, hi = starts[r], max(starts[r], ends[r])
        cursors.append(ScanCursor(r.partition, lo, hi, hi if spec.newest_first else lo))
    state = SearchState(cluster=cluster, spec=spec, scan_id=uuid.uuid4().hex, cursors=tuple(cursors))
    if state.total == 0:
        state.done, state.ended_because = True, "range"
    return state


def search_step(state: SearchState, *, step_s: float = STEP_S,
                chunk_matches: int | None = None) -> tuple[SearchState, list[ScanMatch]]:
    """Scans on for about `step_s` seconds within the search's budgets; returns the new state and the matches.
    `chunk_matches` caps one step's matches, so a caller streaming a large result (an export) holds a bounded
    number of records whatever the filter lets through."""
    if state.done:
        return state, []
    spec = state.spec
    left_s = spec.max_seconds - state.elapsed
    if left_s <= 0:
        return _ended(state, "time budget"), []
    admin = cluster_admin(state.cluster)
    request = ScanRequest(
        scan_id=state.scan_id, topic=spec.topic, cursors=state.cursors, filter=spec.filter,
        newest_first=spec.newest_first, isolation=spec.isolation,
        max_seconds=max(0.05, min(step_s, left_s, settings.KAFKA_REQUEST_TIMEOUT_S)),
        max_records=max(1, spec.max_records - state.scanned),
        max_matches=max(1, min(spec.max_matches - state.matched, chunk_matches or spec.max_matches)))
    chunk = admin.scan_chunk(request)
    new = replace(state, cursors=chunk.cursors, scanned=state.scanned + chunk.scanned,
                  matched=state.matched + len(chunk.matches))
    if chunk.done:
        new = _ended(new, "range", admin=admin)
    elif new.scanned >= spec.max_records:
        new = _ended(new, "records budget", admin=admin)
    elif new.matched >= spec.max_matches:
        new = _ended(new, "match limit", admin=admin)
    elif new.elapsed >= spec.max_seconds:
        new = _ended(new, "time budget", admin=admin)
    return new, list(chunk.matches)


def search_stop(state: SearchState) -> SearchState:
    return state if state.done else _ended(state, "stopped", admin=cluster_admin(state.cluster))


def _ended(state: SearchState, why: str, *, admin=None) -> SearchState:
    if admin is not None:
        admin.scan_close(state.scan_id)
    return replace(state, done=True, ended_because=why)


ENDINGS = {
    "range": "Scanned the whole range.",
    "records budget": "Stopped: the budget of {records} records ran out before the end of the range.",
    "time budget": "Stopped: the budget of {seconds:g} s ran out before the end of the range.",
    "match limit": "Stopped at the limit of {matches} records shown; narrow the filters or raise the limit for more.",
    "stopped": "Stopped on request.",
}


def ending_text(state: SearchState) -> str:
    text = ENDINGS.get(state.ended_because, "")
    return text.format(records=state.spec.max_records, seconds=state.spec.max_seconds,
                       matches=state.spec.max_matches)


MSG_BAD_BOUND = ("'{text}' is not a position: use earliest, latest, an offset, or a time like "
                 "2026-11-21T03:00:00Z (no zone means UTC).")


def parse_bound(text: str, default: str) -> Bound:
    """earliest / latest / an offset / an ISO 8601 time (a zone, or UTC)."""
    text = (text or "").strip()
    if not text or text == default:
        return Bound(default)
    if text in ("earliest", "latest"):
        return Bound(text)
    if text.isdigit():
        return Bound("offset", int(text))
    return Bound("time", parse_time_ms(text, MSG_BAD_BOUND.format(text=text)))


def parse_time_ms(text: str, message: str) -> int:
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise ConsoleError(message) from exc
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def parse_partitions(text: str) -> tuple[int, ...] | None:
    parts = [p for p in (text or "").replace(" ", "").split(",") if p]
    if not parts:
        return None
    if not all(p.isdigit() for p in parts):
        raise ConsoleError("Partitions are numbers separated by commas.")
    return tuple(sorted({int(p) for p in parts}))


def parse_fields(lines: list[str]) -> tuple[tuple[str, str], ...]:
    """`path=value` equalities on the decoded value; the path is dotted (items.0.sku)."""
    pairs = []
    for line in lines:
        if not line.strip():
            continue
        path, sep, wanted = line.partition("=")
        if not sep or not path.strip():
            raise ConsoleError(f"'{line}' is not a field equality: write path=value, e.g. customer.country=NO.")
        pairs.append((path.strip(), wanted.strip()))
    return tuple(pairs)
