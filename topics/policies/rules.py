"""Topic policies as pure values: what a policy asks of a topic, how its rules are written, and which rules a
topic (as it is, or as a change would leave it) breaks.

No Django, no Kafka client: the caller reads the topic's shape (partitions, replication factor, effective configs
and which of them are overrides) and passes it in. Patterns run in RE2 (gateway/user_regex.py), since an admin
types them and every create and change evaluates them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from gateway.user_regex import RegexRefused, compile_user_regex
from topics.configdocs import BROKER_SYNONYMS

# Aspects a change touches; a change is judged only by the rules of what it changes, so that adding partitions to
# a topic whose retention broke a rule before is not refused for the retention.
NAME, PARTITIONS, REPLICATION, CONFIGS = "name", "partitions", "replication", "configs"
EVERY_ASPECT = frozenset({NAME, PARTITIONS, REPLICATION, CONFIGS})

AT_LEAST, AT_MOST, ONE_OF, REQUIRED = ">=", "<=", "in", "required"
OPERATORS = (AT_LEAST, AT_MOST, ONE_OF, REQUIRED)
# Kafka's "no limit" for sizes and times: larger than any bound.
UNLIMITED_WHEN_MINUS_ONE = frozenset({"retention.ms", "retention.bytes", "local.retention.ms",
                                      "local.retention.bytes"})
# The topic configs a rule may name: those the console knows a broker default for (topics/configdocs.py).
RULE_CONFIGS = frozenset(BROKER_SYNONYMS)

MSG_RULE_SYNTAX = ("Config rule {line!r} is not `KEY >= NUMBER`, `KEY <= NUMBER`, `KEY in VALUE | VALUE` or "
                   "`KEY required`, optionally followed by `: message`.")
MSG_RULE_CONFIG = "Config rule {line!r} names {key!r}, which is not a topic config the console checks ({known})."
MSG_RULE_NUMBER = "Config rule {line!r} needs a number after {op}, not {value!r}."
MSG_BOUNDS = "{what}: the minimum {low} is above the maximum {high}."
MSG_VIOLATION = "Policy '{policy}': {message} ({detail})"
MSG_REFUSED = "Refused by topic policy: {violations}"

_RULE = re.compile(r"^\s*([A-Za-z0-9._-]+)\s*(>=|<=|\bin\b|\brequired\b)\s*([^:]*?)\s*(?::\s*(.*?)\s*)?$")


class PolicyInputError(ValueError):
    """A policy that cannot be stored as written; the message says why, for a person."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ConfigRule:
    config: str
    op: str
    value: str = ""  # the bound (>=, <=) or the allowed values separated by commas (in); empty for `required`
    message: str = ""

    @property
    def text(self) -> str:
        rule = f"{self.config} {self.op}" + (f" {self.value}" if self.value else "")
        return rule + (f": {self.message}" if self.message else "")

    def as_dict(self) -> dict:
        return {"config": self.config, "op": self.op, "value": self.value, "message": self.message}


def _number(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _members(value: str) -> frozenset[str]:
    """cleanup.policy=compact,delete and delete,compact are one value."""
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def parse_config_rule(line: str) -> ConfigRule:
    match = _RULE.match(line)
    if not match:
        raise PolicyInputError(MSG_RULE_SYNTAX.format(line=line))
    key, op, value, message = match.group(1), match.group(2), match.group(3).strip(), (match.group(4) or "").strip()
    if key not in RULE_CONFIGS:
        raise PolicyInputError(MSG_RULE_CONFIG.format(line=line, key=key, known=", ".join(sorted(RULE_CONFIGS))))
    if op == REQUIRED:
        if value:
            raise PolicyInputError(MSG_RULE_SYNTAX.format(line=line))
    elif op == ONE_OF:
        choices = [v.strip() for v in value.split("|")] if "|" in value else [value]
        if not value or any(not c for c in choices):
            raise PolicyInputError(MSG_RULE_SYNTAX.format(line=line))
        value = " | ".join(choices)
    elif _number(value) is None:
        raise PolicyInputError(MSG_RULE_NUMBER.format(line=line, op=op, value=value))
    return ConfigRule(config=key, op=op, value=value, message=message)


def parse_config_rules(text: str) -> list[ConfigRule]:
    """One rule a line; blank lines and lines starting with # are skipped."""
    return [parse_config_rule(line) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def check_pattern(pattern: str, what: str) -> None:
    if not pattern:
        return
    try:
        compile_user_regex(pattern)
    except RegexRefused as exc:
        raise PolicyInputError(f"{what}: {exc}") from None


def check_bounds(what: str, low: int | None, high: int | None) -> None:
    if low is not None and high is not None and low > high:
        raise PolicyInputError(MSG_BOUNDS.format(what=what, low=low, high=high))


@dataclass(frozen=True)
class Policy:
    name: str
    applies_to: str = ""  # RE2 searched in the topic's name; empty: every topic but Kafka's internal ones
    name_pattern: str = ""  # RE2 the whole name must match
    name_message: str = ""
    min_partitions: int | None = None
    max_partitions: int | None = None
    partitions_message: str = ""
    min_replication_factor: int | None = None
    max_replication_factor: int | None = None
    replication_message: str = ""
    config_rules: tuple[ConfigRule, ...] = ()

    def applies(self, topic: str) -> bool:
        return not self.applies_to or compile_user_regex(self.applies_to).search(topic) is not None

    @property
    def config_keys(self) -> frozenset[str]:
        return frozenset(rule.config for rule in self.config_rules)


@dataclass(frozen=True)
class TopicShape:
    """A topic as it is, or as a change would leave it. `configs`: effective values of (at least) the keys the
    policies name, None where unknown; `overrides`: the keys set on the topic itself."""

    name: str
    partitions: int | None = None
    replication_factor: int | None = None
    configs: dict[str, str | None] = field(default_factory=dict)
    overrides: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Violation:
    policy: str
    rule: str  # what the rule says, e.g. "partitions >= 3"
    message: str  # the rule's own message (or one derived from the rule)
    detail: str  # what the topic has

    @property
    def text(self) -> str:
        return MSG_VIOLATION.format(policy=self.policy, message=self.message, detail=self.detail)

    def as_dict(self) -> dict:
        return {"policy": self.policy, "rule": self.rule, "message": self.message, "detail": self.detail}


def _bound_violations(policy: Policy, what: str, actual: int | None, low: int | None, high: int | None,
                      message: str) -> list[Violation]:
    if actual is None:
        return []
    found = []
    if low is not None and actual < low:
        found.append(Violation(policy.name, f"{what} >= {low}", message or f"{what} must be at least {low}",
                               f"{what} is {actual}"))
    if high is not None and actual > high:
        found.append(Violation(policy.name, f"{what} <= {high}", message or f"{what} must be at most {high}",
                               f"{what} is {actual}"))
    return found


def _config_violation(policy: Policy, rule: ConfigRule, shape: TopicShape) -> Violation | None:
    value = shape.configs.get(rule.config)
    rule_text = f"{rule.config} {rule.op}" + (f" {rule.value}" if rule.value else "")
    if rule.op == REQUIRED:
        if rule.config in shape.overrides:
            return None
        return Violation(policy.name, rule_text, rule.message or f"{rule.config} must be set on the topic",
                         f"{rule.config} is not set on the topic" + (f" (broker default {value})" if value else ""))
    if value is None:
        return None  # unknown (a sensitive or unreadable value): nothing to judge
    if rule.op == ONE_OF:
        allowed = [_members(choice) for choice in rule.value.split("|")]
        if _members(value) in allowed:
            return None
        return Violation(policy.name, rule_text, rule.message or f"{rule.config} must be one of {rule.value}",
                         f"{rule.config} is {value}")
    actual, bound = _number(value), _number(rule.value)
    if actual is None or bound is None:
        return Violation(policy.name, rule_text,
                         rule.message or f"{rule.config} must be a number {rule.op} {rule.value}",
                         f"{rule.config} is {value}")
    unlimited = rule.config in UNLIMITED_WHEN_MINUS_ONE and actual == -1
    broken = (not unlimited and actual < bound) if rule.op == AT_LEAST else (unlimited or actual > bound)
    if not broken:
        return None
    word = "at least" if rule.op == AT_LEAST else "at most"
    shown = f"{value} (no limit)" if unlimited else value
    return Violation(policy.name, rule_text, rule.message or f"{rule.config} must be {word} {rule.value}",
                     f"{rule.config} is {shown}")


def evaluate(policies: list[Policy], shape: TopicShape, *, aspects: frozenset[str] = EVERY_ASPECT,
             config_keys: frozenset[str] | None = None) -> list[Violation]:
    """The rules `shape` breaks among those of `aspects` (and, for configs, of `config_keys` only, when given),
    in every policy that applies to the topic's name."""
    found: list[Violation] = []
    for policy in policies:
        if not policy.applies(shape.name):
            continue
        if NAME in aspects and policy.name_pattern and compile_user_regex(policy.name_pattern).fullmatch(
                shape.name) is None:
            found.append(Violation(policy.name, f"name matches {policy.name_pattern}",
                                   policy.name_message or f"topic names must match {policy.name_pattern}",
                                   f"name is {shape.name}"))
        if PARTITIONS in aspects:
            found += _bound_violations(policy, "partitions", shape.partitions, policy.min_partitions,
                                       policy.max_partitions, policy.partitions_message)
        if REPLICATION in aspects:
            found += _bound_violations(policy, "replication factor", shape.replication_factor,
                                       policy.min_replication_factor, policy.max_replication_factor,
                                       policy.replication_message)
        if CONFIGS in aspects:
            for rule in policy.config_rules:
                if config_keys is not None and rule.config not in config_keys:
                    continue
                violation = _config_violation(policy, rule, shape)
                if violation is not None:
                    found.append(violation)
    return found


def refusal_text(violations: list[Violation]) -> str:
    return MSG_REFUSED.format(violations="; ".join(v.text for v in violations))


def needed_config_keys(policies: list[Policy]) -> frozenset[str]:
    return frozenset().union(*(p.config_keys for p in policies)) if policies else frozenset()
