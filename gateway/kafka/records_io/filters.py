"""A search's filters compiled once into one test per record. Pure: it sees a message through key(), value(),
headers() and timestamp(), and decodes through the registry only when a filter needs a decoded value.

The common case, a substring or regex on raw values with no registry, compiles to one closure with no decoding
and no per-record allocation: that is what keeps a search near a plain consumer's speed."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from functools import cache

from gateway.kafka.errors import InvalidRequest
from gateway.kafka.types import DecodedPart, ScanFilter
from gateway.user_regex import RegexRefused, compile_user_regex, linear_twin

MAX_JSONPATH_CHARS = 300
MAX_DESCENDANT_STEPS = 2
MAX_JSONPATH_NODES = 100_000  # nodes a JSONPath may visit in one record: under a second here (about 9 µs a node)
RECORD_GRACE_S = 1.0
MSG_JSONPATH_TOO_LONG = "A JSONPath is at most {limit} characters."
MSG_JSONPATH_COMPOUND = ("The JSONPath {expression!r} joins paths with '|' or '&', which RFC 9535 does not have: "
                         "search with one path.")
MSG_JSONPATH_DESCENDANTS = ("The JSONPath {expression!r} has more than {limit} descendant steps ('..'): each one "
                            "multiplies the work by the record's size. Name the fields on the way instead.")
MSG_JSONPATH_WORK = ("The JSONPath {expression!r} visited more than {limit} nodes in the record at partition "
                     "{partition}, offset {offset}: the search stopped there. Name the fields on the way, or "
                     "fewer '..' and '*' steps.")
MSG_JSONPATH_DEEP = ("The record at partition {partition}, offset {offset} is nested too deep for the JSONPath "
                     "{expression!r} to descend: the search stopped there.")
MSG_JSONPATH_SLOW = ("The JSONPath {expression!r} ran more than a second past the search's time budget inside the "
                     "record at partition {partition}, offset {offset}: the search stopped there.")
Parts = tuple[DecodedPart | None, DecodedPart | None]
NOT_DECODED: Parts = (None, None)
_MISSING = object()


def _text_tests(contains: str, regex: str) -> list[Callable[[bytes], bool]]:
    tests = []
    if contains:
        needle = contains.encode()
        tests.append(lambda text: needle in text)
    if regex:
        try:
            pattern = compile_user_regex(regex.encode())
        except RegexRefused as exc:
            raise InvalidRequest(str(exc)) from None
        tests.append(lambda text: pattern.search(text) is not None)
    return tests


class _Work(threading.local):
    """What the JSONPath being evaluated in this thread may still spend: nodes it may visit, and the scan's
    deadline. Every node a JSONPath visits or yields is one match object, so counting those bounds the work."""

    nodes = 0
    limit = 0
    deadline: float | None = None
    cpu_limit = 0.0  # this thread's CPU clock at which the record's own grace is spent


_work = _Work()


class _OverBudget(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _counted(match_class):
    class CountedMatch(match_class):
        __slots__ = ()

        def __init__(self, *args, **kwargs) -> None:
            _work.nodes += 1
            if _work.nodes > _work.limit:
                raise _OverBudget("nodes")
            if (_work.nodes % 256 == 0 and _work.deadline is not None and time.monotonic() > _work.deadline
                    and time.thread_time() > _work.cpu_limit):
                raise _OverBudget("time")
            super().__init__(*args, **kwargs)

    return CountedMatch


def _outside_quotes(expression: str) -> str:
    return re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "''", expression)


def check_jsonpath_shape(expression: str) -> None:
    """Raises InvalidRequest for a JSONPath longer than MAX_JSONPATH_CHARS or with more than
    MAX_DESCENDANT_STEPS descendant steps (`..`): each one multiplies the nodes visited by the record's size."""
    if len(expression) > MAX_JSONPATH_CHARS:
        raise InvalidRequest(MSG_JSONPATH_TOO_LONG.format(limit=MAX_JSONPATH_CHARS))
    if _outside_quotes(expression).count("..") > MAX_DESCENDANT_STEPS:
        raise InvalidRequest(MSG_JSONPATH_DESCENDANTS.format(expression=expression, limit=MAX_DESCENDANT_STEPS))


@cache
def _linear_jsonpath():
    """A JSONPath environment whose regular expressions (`=~ /…/flags`, match(), search()) run in RE2: the
    library's own run in Python's backtracking engine. Built on first use, so only searches that use JSONPath pay
    for the import. A literal RE2 refuses fails the whole JSONPath with RE2's reason; a pattern that arrives as a
    value (match(@.a, @.b)) and is refused matches nothing, as RFC 9535 says of invalid patterns."""
    import jsonpath
    from jsonpath.filter import RegexLiteral
    from jsonpath.function_extensions import Match, Search

    class LinearPatterns:
        def check_cache(self, pattern: str):
            try:
                return compile_user_regex(pattern)
            except RegexRefused:
                return None

    class LinearMatch(LinearPatterns, Match):
        pass

    class LinearSearch(LinearPatterns, Search):
        pass

    class LinearParser(jsonpath.Parser):
        def parse_regex(self, stream):
            python_pattern = super().parse_regex(stream).value  # parses the flags; its pattern is never run
            return RegexLiteral(value=linear_twin(python_pattern))

    class LinearEnvironment(jsonpath.JSONPathEnvironment):
        parser_class = LinearParser
        match_class = _counted(jsonpath.JSONPathMatch)

        def setup_function_extensions(self) -> None:
            super().setup_function_extensions()
            self.function_extensions["match"] = LinearMatch()
            self.function_extensions["search"] = LinearSearch()

    return LinearEnvironment(), jsonpath.JSONPathError, jsonpath.JSONPath


def _jsonpath_test(expression: str, deadline: float | None = None) -> Callable[[object], bool] | None:
    """A test that says whether the JSONPath finds a node in a value; it stops at the first node found, and
    raises _OverBudget past MAX_JSONPATH_NODES nodes or the scan's `deadline` inside one value."""
    if not expression:
        return None
    check_jsonpath_shape(expression)
    environment, JSONPathError, JSONPath = _linear_jsonpath()
    try:
        compiled = environment.compile(expression)
    except RegexRefused as exc:
        raise InvalidRequest(f"The JSONPath {expression!r} cannot be used: {exc}") from None
    except JSONPathError as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InvalidRequest(f"The JSONPath {expression!r} does not compile: {first_line}.") from exc
    if not isinstance(compiled, JSONPath):
        raise InvalidRequest(MSG_JSONPATH_COMPOUND.format(expression=expression))
    # "$[?@.amount > 100]" means the record itself to a person; RFC 9535 applies it to the record's members.
    root_filter = expression.replace(" ", "").startswith("$[?")

    def any_node(data: object) -> bool:
        # JSONPath.finditer makes its root match of the library's own class, whatever the environment's; this is
        # finditer with the environment's (counted) class at the root, which every node below is made from.
        env = compiled.env
        root = env.match_class(filter_context={}, obj=[data] if compiled.pseudo_root else data, parent=None,
                               path=env.pseudo_root_token if compiled.pseudo_root else env.root_token, parts=(),
                               root=data)
        nodes = [root]
        for segment in compiled.segments:
            nodes = segment.resolve(nodes)
        try:
            return next(iter(nodes), None) is not None
        except RecursionError:  # python-jsonpath's own depth limit is one too
            raise _OverBudget("depth") from None

    def finds(value: object) -> bool:
        if value is None:
            return False
        # A record that starts just before the deadline still gets RECORD_GRACE_S of this thread's own CPU time:
        # only a record that alone works that long past it ends the search. CPU, not wall time, so that other
        # processes on a busy host do not turn an ordinary record into a refused one.
        _work.nodes, _work.limit = 0, MAX_JSONPATH_NODES
        _work.deadline = None if deadline is None else max(deadline, time.monotonic() + RECORD_GRACE_S)
        _work.cpu_limit = time.thread_time() + RECORD_GRACE_S
        return any_node(value) or (root_filter and any_node([value]))

    return finds


def list_index(step: str) -> int | None:
    """The list index a dotted path's step names: ASCII digits only ("00" is 0; "²" is no index)."""
    return int(step) if step.isascii() and step.isdigit() else None


def field_path(value: object, path: list[str]) -> object:
    """The node a dotted path (customer.address.0.city) reaches: a step is a member's name, or a list's index."""
    for step in path:
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and (index := list_index(step)) is not None and index < len(value):
            value = value[index]
        else:
            return _MISSING
    return value


def field_equals(found: object, wanted: str) -> bool:
    """A field equals `wanted` read as JSON (12, true, "x") or as the text itself."""
    if found is _MISSING:
        return False
    try:
        literal = json.loads(wanted)
    except ValueError:
        literal = wanted
    return found == literal or str(found) == wanted


def text_of(data: bytes | None, part: DecodedPart | None) -> bytes:
    """What substring and regex filters look at: the decoded JSON of a registry record, else the bytes."""
    if part is not None and part.value is not None:
        return json.dumps(part.value, ensure_ascii=False, separators=(",", ":")).encode()
    return data or b""


def value_of(data: bytes | None, part: DecodedPart | None) -> object:
    """What field and JSONPath filters look at: the registry's decoding, else the bytes parsed as JSON."""
    if part is not None:
        return part.value
    if not data:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        return None


def _bounded(finds: Callable[[object], bool], decoded: object, message, expression: str) -> bool:
    try:
        return finds(decoded)
    except _OverBudget as over:
        template = {"time": MSG_JSONPATH_SLOW, "depth": MSG_JSONPATH_DEEP}.get(over.why, MSG_JSONPATH_WORK)
        raise InvalidRequest(template.format(expression=expression, partition=message.partition(),
                                             offset=message.offset(), limit=MAX_JSONPATH_NODES)) from None


def check_filter(spec: ScanFilter) -> None:
    """Raises InvalidRequest for a regular expression or JSONPath that does not compile."""
    compile_test(spec, None)


def compile_test(spec: ScanFilter, decode: Callable[[bytes | None, bool], DecodedPart | None] | None,
                 deadline: float | None = None) -> Callable[[object], Parts | None] | None:
    """One test per record: None means "keep it all" (no filter); the test returns None to skip a record, else
    the decoded key and value it had to compute (or NOT_DECODED). `decode(data, is_key)` is the registry's
    decoding, None for a cluster without one. A JSONPath that spends more than its budget on one record, or runs
    past `deadline` inside it, ends the search with InvalidRequest naming the record."""
    key_tests = _text_tests(spec.key_contains, spec.key_regex)
    value_tests = _text_tests(spec.value_contains, spec.value_regex)
    fields = [(path.split("."), wanted) for path, wanted in spec.value_fields]
    finds = _jsonpath_test(spec.value_jsonpath, deadline)
    header, header_needle = spec.header_name, spec.header_contains.encode()
    ts_from, ts_to = spec.ts_from_ms, spec.ts_to_ms
    if not (key_tests or value_tests or fields or finds or header or ts_from is not None or ts_to is not None):
        return None
    if decode is None and len(value_tests) == 1 and not (key_tests or fields or finds or header) \
            and ts_from is None and ts_to is None:
        only = value_tests[0]

        def raw_value(message) -> Parts | None:
            value = message.value()
            return NOT_DECODED if value is not None and only(value) else None

        return raw_value

    def full(message) -> Parts | None:
        if ts_from is not None or ts_to is not None:
            ts = message.timestamp()[1]
            if (ts_from is not None and ts < ts_from) or (ts_to is not None and ts > ts_to):
                return None
        if header and not any(k == header and (not header_needle or header_needle in (v or b""))
                              for k, v in message.headers() or ()):
            return None
        key_part = value_part = None
        if key_tests:
            key = message.key()
            key_part = decode(key, True) if decode is not None else None
            text = text_of(key, key_part)
            if not all(test(text) for test in key_tests):
                return None
        if value_tests or fields or finds:
            value = message.value()
            value_part = decode(value, False) if decode is not None else None
            if value_tests:
                text = text_of(value, value_part)
                if not all(test(text) for test in value_tests):
                    return None
            if fields or finds:
                decoded = value_of(value, value_part)
                if any(not field_equals(field_path(decoded, path), wanted) for path, wanted in fields):
                    return None
                if finds is not None and not _bounded(finds, decoded, message, spec.value_jsonpath):
                    return None
        return key_part, value_part

    return full
