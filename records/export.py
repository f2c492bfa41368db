"""Export of a browse or search result as a file, streamed: the search's own range and budgets, read a bounded
chunk at a time (never the whole range in memory), each chunk decoded, masked for the reader and encoded before
the next is read. Audited: who, which range and filters, how many records, how it ended."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, replace

from console.audit.actor import Actor
from console.audit.services import audited
from console.errors import ConsoleError
from records.conf import export_max_records
from masking.mask_rules import Masker
from records.export_formats import FORMAT_VERSION, FORMATS, MSG_BAD_FORMAT, encoder
from records.export_rows import export_record
from records.search import SearchSpec, SearchState, search_begin, search_step
from records.selectors import decoded_matches

CHUNK_RECORDS = 2_000  # records held at once: a chunk is decoded, masked and written before the next is read
STEP_S = 2.0
EXPORT_ACTION = "records.export"
MSG_TOO_MANY = "An export streams at most {limit} records; ask for fewer, or replay the range to files with Spark."


def export_range(state: SearchState) -> dict:
    """The range as the audit log keeps it: per partition the offsets [low, high)."""
    return {str(c.partition): [c.low, c.high] for c in state.cursors}


def export_begin(cluster: str, spec: SearchSpec, fmt: str) -> SearchState:
    """Checks the format and the limit and resolves the range, so that bad input is refused before a download
    starts (once bytes flow, an error can only cut the file short)."""
    if fmt not in FORMATS:
        raise ConsoleError(MSG_BAD_FORMAT.format(name=fmt))
    if spec.max_matches > export_max_records():
        raise ConsoleError(MSG_TOO_MANY.format(limit=export_max_records()))
    return search_begin(cluster, spec)


def records_export(*, actor: Actor, state: SearchState, fmt: str, masker: Masker | None = None, reason: str = "",
                   progress: Callable[[SearchState, int], None] | None = None,
                   step_s: float = STEP_S) -> Iterator[bytes]:
    """The file's bytes, chunk by chunk, from a state export_begin returned: every record's bytes as Kafka holds
    them (never the page's shortened view), the parts `masker` covers as their masked text. The audit intent is
    written when the first chunk is asked for, the outcome (records written, how the range ended) when the last
    is; a download broken off by the client ends as a failure with the count so far."""
    spec = state.spec
    filters = {k: v for k, v in asdict(spec.filter).items() if v not in ("", None, ())}
    params = {"format": fmt, "format_version": FORMAT_VERSION, "range": export_range(state), "isolation": spec.isolation,
              "newest_first": spec.newest_first, "filter": filters,
              "limits": {"records": spec.max_records, "seconds": spec.max_seconds, "matches": spec.max_matches}}
    writer = encoder(fmt)
    with audited(actor=actor, action=EXPORT_ACTION, cluster=state.cluster, target=f"topic:{spec.topic}",
                 reason=reason, params=params) as record:
        written = 0
        record.after = {"records": 0}
        yield writer.head()
        while not state.done:
            state, matches = search_step(state, step_s=step_s, chunk_matches=CHUNK_RECORDS)
            rows = [export_record(m.record, m.key, m.value, masker)
                    for m in decoded_matches(matches, cluster=state.cluster)]
            written += len(rows)
            record.after = {"records": written, "scanned": state.scanned}
            if rows:
                yield writer.rows(rows)
            if progress is not None:
                progress(state, written)
        record.after = {"records": written, "scanned": state.scanned, "ended": state.ended_because,
                        "seconds": round(state.elapsed, 3), "masked": bool(masker)}
        yield writer.tail()


def export_spec(spec: SearchSpec, limit: int) -> SearchSpec:
    """The spec with the export's own record limit in place of the page's match limit."""
    return replace(spec, max_matches=limit)
