"""Regular expressions that users type, run in RE2: matching time grows with the text, never with the pattern.

Python's `re` backtracks: `(a|aa)+$` against forty `a`s and a `b` takes longer than a page may wait, and it holds
the process (a search runs inside the cluster's client process, so every other call on that cluster waited with
it). RE2 refuses what needs backtracking (backreferences, look-arounds, possessive and atomic groups) at compile
time, with its reason, and bounds the memory a compiled pattern may use; what it accepts runs in linear time.
Pure: no Django, no Kafka, so the gateway's child process and the pages use the same rules.
"""

from __future__ import annotations

import re

import re2

MAX_PATTERN_LENGTH = 1000
MAX_PROGRAM_BYTES = 4 << 20  # RE2 fails to compile a pattern whose automaton would need more ("a{1000}{1000}")
MSG_BAD_REGEX = "The regular expression {pattern!r} does not compile: {reason}."
MSG_TOO_LONG = f"it is longer than {MAX_PATTERN_LENGTH} characters"
MSG_NEEDS_BACKTRACKING = ("{detail} (back-references and look-arounds need a backtracking engine, whose time one "
                          "pattern can make unbounded, so the console runs regular expressions in RE2, which has none)")
# RE2's own words for the constructs only a backtracking engine runs.
_BACKTRACKING_HINTS = ("invalid perl operator: (?<",
                       "invalid perl operator: (?=", "invalid perl operator: (?!", "invalid perl operator: (?>",
                       "bad repetition operator: *+", "bad repetition operator: ++", "bad repetition operator: ?+")


MSG_INCOMPLETE = "incomplete ({detail})"
_UNFINISHED = ("missing )", "missing ]", "trailing \\", "missing argument to repetition operator")


class RegexRefused(ValueError):
    """A pattern RE2 will not run; the message says why, for a person."""


def _options(*, ignore_case: bool, dot_all: bool) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would otherwise print every refused pattern to the process's stderr
    options.max_mem = MAX_PROGRAM_BYTES
    options.case_sensitive = not ignore_case
    options.dot_nl = dot_all
    return options


def _reason(error: Exception) -> str:
    detail = error.args[0] if error.args else str(error)
    if isinstance(detail, bytes):
        detail = detail.decode(errors="replace")
    if any(hint in detail for hint in _BACKTRACKING_HINTS) or re.search(r"invalid escape sequence: \\[1-9]", detail):
        return MSG_NEEDS_BACKTRACKING.format(detail=detail)
    if detail.startswith(_UNFINISHED):  # typed half-way: what a filter that runs as one types usually shows
        return MSG_INCOMPLETE.format(detail=detail)
    return detail


def compile_user_regex(pattern: str | bytes, *, ignore_case: bool = False, dot_all: bool = False):
    """A compiled RE2 pattern (search, fullmatch, match like `re`'s), of bytes when `pattern` is bytes; raises
    RegexRefused for a pattern that is too long, does not parse, needs backtracking or is too large to compile."""
    shown = pattern.decode(errors="replace") if isinstance(pattern, bytes) else pattern
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise RegexRefused(MSG_BAD_REGEX.format(pattern=shown[:60] + "…", reason=MSG_TOO_LONG))
    try:
        return re2.compile(pattern, _options(ignore_case=ignore_case, dot_all=dot_all))
    except re2.error as exc:
        raise RegexRefused(MSG_BAD_REGEX.format(pattern=shown, reason=_reason(exc))) from None


def linear_twin(compiled: re.Pattern):
    """The RE2 pattern for one that a library compiled with Python's `re` (JSONPath's `=~` literals), keeping the
    flags a person can give there; RegexRefused when RE2 will not run it."""
    flags = compiled.flags
    prefix = "(?m)" if flags & re.MULTILINE else ""
    pattern = compiled.pattern
    if isinstance(pattern, bytes):
        pattern = prefix.encode() + pattern
    else:
        pattern = prefix + pattern
    return compile_user_regex(pattern, ignore_case=bool(flags & re.IGNORECASE), dot_all=bool(flags & re.DOTALL))
