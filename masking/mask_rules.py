"""Masking rules applied to what a record shows, pure (standard library only): the console's pages and shell
use it, and a Spark replay's executors load this very file, so a replay to files masks exactly as a page does.

A rule selects a part of a record (a JSON path into the decoded value, the key, a header by name, or a regular
expression over the text shown) and does one action to it: hide, replace with a fixed text, keep the last N
characters, or hash (HMAC-SHA256 under the console's key, so equal values hash equal and can still be joined,
but cannot be guessed back without the key). Rules fail closed: a value a JSON-path rule applies to that does
not parse as JSON (a value cut short for display, say) is hidden whole rather than shown unmasked."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass

SELECTORS = ("jsonpath", "key", "header", "regex")
ACTIONS = ("hide", "replace", "keep_last", "hash")
HIDDEN = "[hidden]"
HIDDEN_VALUE = "[hidden: the value could not be read to mask it]"
# The path grammar people type: $.a.b, a.b[0], $.items[*].card, $['odd name'].x; nothing else (no filters or
# recursion), so a path costs a walk of the value and nothing more.
_STEP = re.compile(r"""\.(?P<name>[A-Za-z0-9_$@-]+)|\[(?P<index>\d{1,6})\]|\[(?P<star>\*)\]|\.(?P<dotstar>\*)"""
                   r"""|\[(?P<q>['"])(?P<quoted>(?:(?!(?P=q)).){1,200})(?P=q)\]""")
MSG_BAD_PATH = ("'{path}' is not a field path: write $.customer.email, $.items[*].card, $.items[0].sku or "
                "$['odd name'].x")


class RuleRefused(ValueError):
    """A rule that cannot be used; the message says why, for a person."""


def parse_path(path: str) -> tuple[tuple[str, object], ...]:
    """Steps of a JSON path: ("name", str), ("index", int) or ("star", None)."""
    text = path.strip()
    if not text:
        raise RuleRefused(MSG_BAD_PATH.format(path=path))
    if not text.startswith("$"):
        text = "$." + text if not text.startswith("[") else "$" + text
    position, steps = 1, []
    while position < len(text):
        found = _STEP.match(text, position)
        if found is None:
            raise RuleRefused(MSG_BAD_PATH.format(path=path))
        if found.group("name") is not None:
            steps.append(("name", found.group("name")))
        elif found.group("quoted") is not None:
            steps.append(("name", found.group("quoted")))
        elif found.group("index") is not None:
            steps.append(("index", int(found.group("index"))))
        else:
            steps.append(("star", None))
        position = found.end()
    if not steps or len(steps) > 32:
        raise RuleRefused(MSG_BAD_PATH.format(path=path))
    return tuple(steps)


@dataclass(frozen=True)
class Rule:
    """One rule as the core applies it (the console's model holds who and where; this, what and how)."""

    selector: str
    target: str = ""  # the JSON path, header name or regular expression; empty for the key
    action: str = "hide"
    replacement: str = ""
    keep_last: int = 4

    def as_dict(self) -> dict:
        return {"selector": self.selector, "target": self.target, "action": self.action,
                "replacement": self.replacement, "keep_last": self.keep_last}


def check_rule(rule: Rule, compile_regex) -> None:
    """Raises RuleRefused for a rule that cannot run; `compile_regex` is the console's safe regex compiler."""
    if rule.selector not in SELECTORS:
        raise RuleRefused(f"'{rule.selector}' is not a selector: choose one of {', '.join(SELECTORS)}.")
    if rule.action not in ACTIONS:
        raise RuleRefused(f"'{rule.action}' is not an action: choose one of {', '.join(ACTIONS)}.")
    if rule.selector == "jsonpath":
        parse_path(rule.target)
    elif rule.selector in ("header", "regex") and not rule.target.strip():
        raise RuleRefused(f"A {rule.selector} rule needs a {'header name' if rule.selector == 'header' else 'pattern'}.")
    elif rule.selector == "regex":
        try:
            compile_regex(rule.target)
        except ValueError as exc:
            raise RuleRefused(str(exc)) from None
    if not 0 <= rule.keep_last <= 1000:
        raise RuleRefused("Keep the last 0 to 1000 characters.")


class Masker:
    """The rules that apply to one reader of one topic, ready to mask key, value and header texts and JSON."""

    def __init__(self, rules: list[Rule], *, hash_key: bytes | None, compile_regex) -> None:
        self.rules = list(rules)
        self.hash_key = hash_key
        self.paths = [(r, parse_path(r.target)) for r in self.rules if r.selector == "jsonpath"]
        self.regexes = [(r, compile_regex(r.target)) for r in self.rules if r.selector == "regex"]
        self.key_rules = [r for r in self.rules if r.selector == "key"]
        self.header_rules = {}
        for r in self.rules:
            if r.selector == "header":
                self.header_rules.setdefault(r.target, r)

    def __bool__(self) -> bool:
        return bool(self.rules)

    # -- what each action makes of a text ------------------------------------------------------------------

    def act(self, rule: Rule, text: str) -> str | None:
        """The masked text; None for hide where the thing can be left out (a field, a header)."""
        if rule.action == "replace":
            return rule.replacement
        if rule.action == "keep_last":
            shown = text[-rule.keep_last:] if rule.keep_last else ""
            return "*" * (len(text) - len(shown)) + shown
        if rule.action == "hash" and self.hash_key:
            return "hmac:" + hmac.new(self.hash_key, text.encode("utf-8"), hashlib.sha256).hexdigest()[:32]
        return None  # hide, and hash without a key (fails closed)

    def _scalar(self, rule: Rule, value: object) -> str | None:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return self.act(rule, text)

    # -- JSON values ----------------------------------------------------------------------------------------

    def _walk(self, node: object, steps, rule: Rule) -> object:
        if not steps:
            return node
        (kind, arg), rest = steps[0], steps[1:]
        if kind == "name" and isinstance(node, dict) and arg in node:
            return {k: (self._leaf(v, rest, rule) if k == arg else v) for k, v in node.items()
                    if not (k == arg and not rest and self._scalar(rule, v) is None)}
        if kind == "index" and isinstance(node, list) and arg < len(node):
            return [self._leaf(v, rest, rule) if i == arg else v for i, v in enumerate(node)]
        if kind == "star" and isinstance(node, list):
            return [self._leaf(v, rest, rule) for v in node]
        if kind == "star" and isinstance(node, dict):
            return {k: self._leaf(v, rest, rule) for k, v in node.items()
                    if rest or self._scalar(rule, v) is not None}
        return node

    def _leaf(self, value: object, rest, rule: Rule) -> object:
        if rest:
            return self._walk(value, rest, rule)
        return self._scalar(rule, value)  # None in a list: the item stays in place, emptied

    def json(self, value: object) -> object:
        """A decoded value with every JSON-path rule applied (fields hidden are left out of their object)."""
        for rule, steps in self.paths:
            value = self._walk(value, steps, rule)
        return value

    def text(self, text: str) -> str:
        """A text with every regex rule applied to what it matches."""
        for rule, pattern in self.regexes:
            text = pattern.sub(lambda m, r=rule: self.act(r, m.group(0)) or HIDDEN, text)
        return text

    # -- the parts of a record ------------------------------------------------------------------------------

    def key(self, value: object) -> object:
        """A key as JSON (decoded object, text or None): key rules first, then regexes over its text."""
        if value is None:
            return None
        for rule in self.key_rules:
            return self._scalar(rule, value) or HIDDEN
        return self._regex_json(value)

    def value(self, value: object, *, parsed: bool) -> object:
        """A value as JSON. `parsed`: the value is the decoded JSON of a record (JSON-path rules apply); a text
        that a JSON-path rule would have needed to parse is hidden whole when it looks like JSON."""
        if value is None:
            return None
        if self.paths:
            if parsed:
                value = self.json(value)
            elif isinstance(value, str) and value.lstrip().lstrip("\ufeff").lstrip()[:1] in ("{", "["):
                return HIDDEN_VALUE
        return self._regex_json(value)

    def header(self, name: str, value: str | None) -> tuple[bool, str | None]:
        """(kept, text): a hidden header is left out."""
        rule = self.header_rules.get(name)
        if rule is not None and value is not None:
            masked = self.act(rule, value)
            if masked is None:
                return False, None
            value = masked
        return True, None if value is None else self.text(value)

    def _regex_json(self, value: object) -> object:
        if not self.regexes:
            return value
        if isinstance(value, str):
            return self.text(value)
        # Over a decoded value, a regex masks within each string (and each key's text), keeping the JSON whole.
        if isinstance(value, dict):
            return {k: self._regex_json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._regex_json(v) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        text = self.text(json.dumps(value))
        try:
            return json.loads(text)
        except ValueError:
            return text

    def record(self, row: dict) -> dict:
        """A record as a dict (key, value, headers as [[name, text]]) masked; `value_parsed` says the value is
        decoded JSON rather than text."""
        parsed = not isinstance(row.get("value"), str)
        headers = []
        for name, text in row.get("headers") or []:
            kept, masked = self.header(name, text if isinstance(text, str) or text is None else json.dumps(text))
            if kept:
                headers.append([name, masked])
        return {**row, "key": self.key(row.get("key")), "value": self.value(row.get("value"), parsed=parsed),
                "headers": headers}
