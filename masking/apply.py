"""Masking the console's rows (a page of the browser, search matches, the copy page, exports) and refusing
searches that would find what a reader may not see. Rows are any dataclass with `key`, `value` (the pages'
Decoded) and `headers` ([(name, Decoded)]), so this app needs neither topics nor records."""

from __future__ import annotations

import json
from dataclasses import replace

from console.errors import ConsoleError
from gateway.kafka.records_io.filters import list_index
from gateway.kafka.types import ScanFilter
from masking.mask_rules import HIDDEN_VALUE, Masker

JSON_KINDS = ("avro", "protobuf", "json-schema", "json")
MSG_MASKED_COPY = ("Copying is refused: masking rules hide parts of {topic}'s records from your role, and a copy "
                   "writes every byte to a topic they may not cover.")
MSG_MASKED_FILTER = ("The {what} filter is refused: masking rules hide parts of this topic's records from your "
                     "role, and a search on them would tell what they hold.")


def _as_decoded(part, masked: object):
    if part.kind in JSON_KINDS and not isinstance(masked, str):
        return replace(part, text=json.dumps(masked, indent=2, ensure_ascii=False))
    if masked is None:
        return part
    return replace(part, kind="text" if part.kind in JSON_KINDS else part.kind, text=str(masked))


def mask_row(masker: Masker | None, row):
    if not masker:
        return row
    key = _as_decoded(row.key, masker.key(row.key.value)) if row.key.kind not in ("null", "empty") else row.key
    value = row.value
    if value.kind == "hex" and masker.paths:
        # Bytes the registry could not decode: a JSON-path rule cannot find its field in them, so none show.
        value = replace(value, kind="text", text=HIDDEN_VALUE)
    elif value.kind not in ("null", "empty"):
        value = _as_decoded(value, masker.value(value.value, parsed=value.kind in JSON_KINDS
                                                and not isinstance(value.value, str)))
    headers = []
    for name, part in row.headers:
        kept, text = masker.header(name, None if part.kind == "null" else part.text)
        if kept:
            headers.append((name, part if text is None else replace(part, kind="text", text=text)))
    return replace(row, key=key, value=value, headers=headers)


def mask_rows(masker: Masker | None, rows: list) -> list:
    return rows if not masker else [mask_row(masker, r) for r in rows]


def mask_page(masker: Masker | None, page):
    return page if not masker else replace(page, records=mask_rows(masker, page.records))


def _step_reaches(step: str, rule_step: tuple[str, object]) -> bool:
    """Whether a search's step (read as the scanner reads it: a member's name, or a list index in ASCII digits,
    "00" being 0) can reach what a rule's step selects. Numbers are compared as numbers, names as names."""
    kind, arg = rule_step
    if kind == "star":
        return True
    index = list_index(step)
    if kind == "index":
        return index == arg
    return step == arg or (index is not None and list_index(str(arg)) == index)


def _overlaps(path: str, masked: list[tuple]) -> bool:
    """Whether a field a search compares (a dotted path, split as the scanner splits it) lies inside a masked
    field or holds one."""
    steps = path.split(".")
    return any(all(_step_reaches(step, rule_step) for step, rule_step in zip(steps, other, strict=False))
               for other in masked)


def check_search(masker: Masker | None, scan_filter: ScanFilter) -> None:
    """Raises ConsoleError when a filter looks at something the rules mask for this reader."""
    if not masker:
        return
    regex = bool(masker.regexes)
    if (scan_filter.key_contains or scan_filter.key_regex) and (masker.key_rules or regex):
        raise ConsoleError(MSG_MASKED_FILTER.format(what="key"))
    value_masked = bool(masker.paths) or regex
    if (scan_filter.value_contains or scan_filter.value_regex or scan_filter.value_jsonpath) and value_masked:
        raise ConsoleError(MSG_MASKED_FILTER.format(what="value"))
    masked_paths = [steps for _, steps in masker.paths]
    for path, _ in scan_filter.value_fields:
        if regex or _overlaps(path, masked_paths):
            raise ConsoleError(MSG_MASKED_FILTER.format(what=f"field '{path}'"))
    if scan_filter.header_name and (regex or scan_filter.header_name in masker.header_rules):
        raise ConsoleError(MSG_MASKED_FILTER.format(what="header"))
