"""Which masking rules apply to a reader of a topic, as a Masker (None when none do)."""

from __future__ import annotations

from functools import partial

from console.accounts.roles import user_role
from gateway.user_regex import RegexRefused, compile_user_regex
from masking.conf import hash_key
from masking.mask_rules import Masker, Rule
from masking.models import MaskRule


def _topic_matches(pattern: str, topic: str) -> bool:
    try:
        return compile_user_regex(pattern).fullmatch(topic) is not None
    except RegexRefused:
        return True  # a pattern that no longer compiles (RE2 upgraded, say) masks every topic: fail closed


def rule_of(row: MaskRule) -> Rule:
    return Rule(selector=row.selector, target=row.target, action=row.action, replacement=row.replacement,
                keep_last=row.keep_last)


def rules_for(cluster: str, topic: str, user) -> list[Rule]:
    """The rules of the cluster whose pattern matches the topic and whose roles hold the user's role; a reader
    with no known role (the shell without --actor) gets every rule of the topic."""
    role = user_role(user) if user is not None else None
    name = role.group_name if role is not None else None
    return [rule_of(r) for r in MaskRule.objects.filter(cluster=cluster)
            if (name is None or name in r.roles) and _topic_matches(r.topic_pattern, topic)]


def masker_for(cluster: str, topic: str, user) -> Masker | None:
    rules = rules_for(cluster, topic, user)
    if not rules:
        return None
    return Masker(rules, hash_key=hash_key(), compile_regex=partial(compile_user_regex))


def mask_rule_list(cluster: str) -> list[MaskRule]:
    return list(MaskRule.objects.filter(cluster=cluster))


def masks_any_topic(cluster: str, user) -> bool:
    """Whether any rule of the cluster applies to the user's role, whatever its topics (for a reader that names
    its topics by a pattern, which cannot be compared with the rules' patterns)."""
    role = user_role(user) if user is not None else None
    name = role.group_name if role is not None else None
    return any(name is None or name in row.roles for row in MaskRule.objects.filter(cluster=cluster))
