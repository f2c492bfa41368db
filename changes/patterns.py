"""Name patterns of a protection: which topics or groups of a cluster need a second person.

A pattern is a shell glob (`orders-*`, `pay?ments`, `[ab]-x`), the default, or `re:` and a regular expression that
must match the whole name. Kafka names are arbitrary text, so both match any character (`/`, spaces, `#`, `%`,
quotes, Unicode). A regular expression is admitted only from an allowlist of syntax: literals, escapes of
punctuation, `\\d \\w \\s` and their negations, `.`, classes, anchors, alternation, plain or non-capturing groups, and
bounded quantifiers. A quantified group may hold neither a quantifier nor an alternation, which rules out the
nested repetitions (`(a+)+`, `(a|aa)*`) whose backtracking can take exponential time on a crafted name.

Pure: no Django, no Kafka."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

PATTERN_MAX = 200
REPEAT_MAX = 1000
REGEX_PREFIX = "re:"
GLOB_PREFIX = "glob:"

MSG_EMPTY = "A pattern cannot be empty."
MSG_TOO_LONG = f"A pattern is at most {PATTERN_MAX} characters."
MSG_REGEX = "Regular expression {pattern!r} is refused: {why}."
WHY_GROUP = "only plain '(...)' and non-capturing '(?:...)' groups are allowed (no lookarounds, flags or names)"
WHY_ESCAPE = "the escape \\{char} is not allowed (only punctuation, \\d \\D \\w \\W \\s \\S)"
WHY_NESTED = "a repeated group may not hold a quantifier or '|' (nested repetition can take exponential time)"
WHY_NOTHING = "a quantifier must follow something"
WHY_TWICE = "two quantifiers in a row"
WHY_BRACES = "a {m,n} repetition takes numbers up to " + str(REPEAT_MAX)
WHY_UNBALANCED = "unbalanced parentheses"
WHY_CLASS = "an unterminated [ class"
WHY_INVALID = "Python cannot compile it ({error})"
_CLASS_ESCAPES = set("dDwWsS")


class PatternError(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class _Group:
    risky: bool = False  # holds a quantifier or an alternation


@dataclass
class _Scan:
    """What the regex scanner knows: open groups, and what a quantifier now would repeat."""

    groups: list[_Group] = field(default_factory=list)
    atom: str = ""  # "" nothing, "char", "group-safe", "group-risky", "quantified"

    def mark_risky(self) -> None:
        if self.groups:
            self.groups[-1].risky = True


def _class_end(text: str, start: int) -> int:
    """The index just past the `]` closing the class that opens at `start`."""
    i = start + 1
    if i < len(text) and text[i] == "^":
        i += 1
    if i < len(text) and text[i] == "]":
        i += 1  # a leading ] is a literal
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 >= len(text):
                break
            escaped = text[i + 1]
            if escaped.isalnum() and escaped not in _CLASS_ESCAPES:
                raise PatternError(WHY_ESCAPE.format(char=escaped))
            i += 2
            continue
        if char == "[":
            raise PatternError("nested '[' inside a class is not allowed")
        if char == "]":
            return i + 1
        i += 1
    raise PatternError(WHY_CLASS)


_BRACES = re.compile(r"\{(\d+)(,(\d*))?\}")


def _quantifier(text: str, i: int, scan: _Scan) -> int:
    """Checks the quantifier at `i`; returns the index after it (and its lazy `?`)."""
    if scan.atom == "":
        raise PatternError(WHY_NOTHING)
    if scan.atom == "quantified":
        raise PatternError(WHY_TWICE)
    if scan.atom == "group-risky":
        raise PatternError(WHY_NESTED)
    if text[i] == "{":
        match = _BRACES.match(text, i)
        if match is None:
            raise PatternError(WHY_BRACES)
        numbers = [int(n) for n in (match.group(1), match.group(3)) if n]
        if any(n > REPEAT_MAX for n in numbers):
            raise PatternError(WHY_BRACES)
        i = match.end()
    else:
        i += 1
    if i < len(text) and text[i] == "?":
        i += 1  # lazy
    scan.mark_risky()
    scan.atom = "quantified"
    return i


def check_regex(text: str) -> None:
    """Raises PatternError unless `text` uses only the allowlisted syntax (see the module's docstring)."""
    scan = _Scan()
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 >= len(text):
                raise PatternError("a trailing backslash")
            escaped = text[i + 1]
            if escaped.isalnum() and escaped not in _CLASS_ESCAPES:
                raise PatternError(WHY_ESCAPE.format(char=escaped))
            scan.atom, i = "char", i + 2
        elif char == "[":
            scan.atom, i = "char", _class_end(text, i)
        elif char == "(":
            if text.startswith("(?", i):
                if not text.startswith("(?:", i):
                    raise PatternError(WHY_GROUP)
                i += 3
            else:
                i += 1
            scan.groups.append(_Group())
            scan.atom = ""
        elif char == ")":
            if not scan.groups:
                raise PatternError(WHY_UNBALANCED)
            closed = scan.groups.pop()
            if closed.risky:
                scan.mark_risky()  # the enclosing group holds what this one held
            scan.atom, i = ("group-risky" if closed.risky else "group-safe"), i + 1
        elif char in "*+?{":
            i = _quantifier(text, i, scan)
        elif char == "|":
            scan.mark_risky()
            scan.atom, i = "", i + 1
        elif char in "^$":
            scan.atom, i = "", i + 1
        else:
            scan.atom, i = "char", i + 1
    if scan.groups:
        raise PatternError(WHY_UNBALANCED)


@dataclass(frozen=True)
class NamePattern:
    """One pattern as written, and the expression that decides a match."""

    text: str
    regex: re.Pattern

    @property
    def is_regex(self) -> bool:
        return self.text.startswith(REGEX_PREFIX)

    def matches(self, name: str) -> bool:
        return self.regex.fullmatch(name) is not None


def parse_pattern(text: str) -> NamePattern:
    """A pattern as stored: `re:EXPR`, `glob:GLOB` or a bare glob. Raises PatternError with a message for people."""
    if not text.strip():
        raise PatternError(MSG_EMPTY)
    if len(text) > PATTERN_MAX:
        raise PatternError(MSG_TOO_LONG)
    if text.startswith(REGEX_PREFIX):
        expression = text[len(REGEX_PREFIX):]
        if not expression:
            raise PatternError(MSG_EMPTY)
        try:
            check_regex(expression)
            return NamePattern(text, re.compile(expression))
        except PatternError as exc:
            raise PatternError(MSG_REGEX.format(pattern=expression, why=exc.message)) from None
        except re.error as exc:
            why = WHY_INVALID.format(error=exc)
            raise PatternError(MSG_REGEX.format(pattern=expression, why=why)) from None
    glob = text.removeprefix(GLOB_PREFIX)
    if not glob:
        raise PatternError(MSG_EMPTY)
    # fnmatch's translation ends in \Z and keeps every other character literal; case is kept (Kafka's names are
    # case-sensitive), which fnmatchcase's semantics are.
    return NamePattern(text, re.compile(fnmatch.translate(glob), re.DOTALL))


def parse_patterns(lines: list[str]) -> list[NamePattern]:
    """Each non-blank line a pattern; the first bad one raises, naming itself."""
    return [parse_pattern(line) for line in lines if line.strip()]


def any_matches(patterns: list[str], name: str) -> bool:
    """Whether one of the stored patterns matches `name`. Stored patterns were checked when saved; one that no longer
    parses (a stricter allowlist since) matches every name: a protection fails closed."""
    for text in patterns:
        try:
            if parse_pattern(text).matches(name):
                return True
        except PatternError:
            return True
    return False
