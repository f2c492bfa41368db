"""The JSON of `manage.py messages read|search|produce --format json`, which the API answers too: the records of a
scan (masked for the reader) then its counts, and a written record's place."""

from __future__ import annotations

from collections.abc import Iterator

from masking.apply import check_search, mask_rows
from masking.selectors import masker_for
from records.search import SearchState, search_begin, search_step
from records.selectors import match_rows

STEP_S = 2.0


def scan_summary_json(state: SearchState) -> dict:
    return {"matched": state.matched, "scanned": state.scanned, "range": state.total, "covered": state.covered,
            "seconds": round(state.elapsed, 3), "records_per_s": state.rate, "ended": state.ended_because}


def scan_records(cluster: str, spec, masker, *, step_s: float = STEP_S) -> Iterator[object]:
    """Each record the scan finds (a MatchRow, masked as `masker` says; `as_json()` is its JSON), then the scan's
    final state (`scan_summary_json` is its JSON). A generator, so the shell prints records as they come."""
    state = search_begin(cluster, spec)
    while not state.done:
        state, matches = search_step(state, step_s=step_s)
        for row in mask_rows(masker, match_rows(matches, cluster=cluster)):
            yield row
    yield state


def written_json(written) -> dict:
    return {"topic": written.topic, "partition": written.partition, "offset": written.offset,
            "timestamp": written.timestamp}


def scan_json(cluster: str, topic: str, spec, user) -> dict:
    """A whole bounded search as the API and MCP answer it: the records (masked for `user`) and the summary."""
    masker = masker_for(cluster, topic, user)
    check_search(masker, spec.filter)
    records, state = [], None
    for found in scan_records(cluster, spec, masker):
        if hasattr(found, "as_json"):
            records.append(found.as_json())
        else:
            state = found
    return {"records": records, "summary": scan_summary_json(state)}
