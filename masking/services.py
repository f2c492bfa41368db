"""Writes of masking rules, audited: the audit log keeps each rule as created and as it was when deleted."""

from __future__ import annotations

from django.db import transaction

from console.accounts.roles import Role
from console.audit.actor import Actor
from console.audit.services import audited
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from gateway.user_regex import RegexRefused, compile_user_regex
from masking.conf import HASH_KEY_VARIABLE, hash_key
from masking.mask_rules import Rule, RuleRefused, check_rule
from masking.models import MaskRule

ROLE_NAMES = tuple(role.group_name for role in Role)
MSG_ROLES = "Roles are some of {names}."
MSG_NO_HASH_KEY = f"Hashing needs the console's key: set {HASH_KEY_VARIABLE} in the environment of every process."
MSG_NO_RULE = "There is no masking rule #{rule_id} on cluster '{cluster}'."


def _as_params(rule: MaskRule) -> dict:
    return {"id": rule.pk, "topic_pattern": rule.topic_pattern, "selector": rule.selector, "target": rule.target,
            "action": rule.action, "replacement": rule.replacement, "keep_last": rule.keep_last,
            "roles": rule.roles}


def mask_rule_create(*, actor: Actor, cluster: str, topic_pattern: str, selector: str, target: str = "",
                     action: str = "hide", replacement: str = "", keep_last: int = 4,
                     roles: list[str] | None = None, reason: str = "") -> MaskRule:
    """Checks the rule (its topic pattern and regex in RE2, its JSON path against the allowed grammar), then
    stores it; it applies from the next read on."""
    cluster_get(cluster)
    roles = list(roles) if roles else ["viewer", "operator"]
    if not set(roles) <= set(ROLE_NAMES):
        raise ConsoleError(MSG_ROLES.format(names=", ".join(ROLE_NAMES)))
    try:
        compile_user_regex(topic_pattern)
        check_rule(Rule(selector=selector, target=target.strip() if selector != "regex" else target, action=action,
                        replacement=replacement, keep_last=keep_last), compile_user_regex)
    except (RuleRefused, RegexRefused) as exc:
        raise ConsoleError(str(exc)) from None
    if action == "hash" and hash_key() is None:
        raise ConsoleError(MSG_NO_HASH_KEY)
    rule = MaskRule(cluster=cluster, topic_pattern=topic_pattern, selector=selector,
                    target=target.strip() if selector != "regex" else target, action=action,
                    replacement=replacement, keep_last=keep_last, roles=roles, created_by_name=actor.name)
    with audited(actor=actor, action="masking.rule.create", cluster=cluster, target=f"topics:{topic_pattern}",
                 reason=reason, params=_as_params(rule)) as record:
        with transaction.atomic():
            rule.save()
        record.after = _as_params(rule)
    return rule


def mask_rule_delete(*, actor: Actor, cluster: str, rule_id: int, reason: str = "") -> None:
    rule = MaskRule.objects.filter(cluster=cluster, pk=rule_id).first()
    if rule is None:
        raise ConsoleError(MSG_NO_RULE.format(rule_id=rule_id, cluster=cluster))
    with audited(actor=actor, action="masking.rule.delete", cluster=cluster, target=f"topics:{rule.topic_pattern}",
                 reason=reason, before=_as_params(rule)):
        rule.delete()
