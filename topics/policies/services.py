"""Writes for topic policies: storing and removing a cluster's policies (audited), and the check every topic create,
config change and partition change makes before it acts (a refusal is audited; an admin's override is too)."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from console.accounts.roles import Role, require_role
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.services import audit_record, audit_refusal
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError, NotFound
from topics.models import TopicPolicy
from topics.policies.rules import (
    EVERY_ASPECT, ConfigRule, PolicyInputError, TopicShape, Violation, check_bounds, check_pattern, evaluate,
    refusal_text,
)
from topics.policies.selectors import cluster_policies, policy_from_row

MSG_POLICY_NAME = "A policy name is 1 to 100 letters, digits, spaces, '.', '_' or '-'."
MSG_POLICY_EXISTS = "Cluster '{cluster}' already has a policy named '{name}'."
MSG_NO_POLICY = "Cluster '{cluster}' has no policy named '{name}'."
MSG_EMPTY_POLICY = "The policy has no rule: give a name pattern, bounds or config rules."
MSG_OVERRIDE_REASON = "Overriding a topic policy needs a reason: it goes into the audit log with the rules broken."
OVERRIDE_ACTION = "topic.policy.override"


class PolicyRefused(ConsoleError):
    """A change a topic policy forbids; the message names each rule broken with its own message."""

    def __init__(self, violations: list[Violation]) -> None:
        super().__init__(refusal_text(violations))
        self.violations = violations


def _valid_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 100 or not all(c.isalnum() or c in " ._-" for c in name) or not name.isascii():
        raise ConsoleError(MSG_POLICY_NAME)
    return name


def _fields(values: dict) -> dict:
    """The model's fields from what a person typed, checked: patterns compile in RE2, minimums are not above
    maximums, and the policy says something."""
    try:
        check_pattern(values.get("applies_to", ""), "Applies to")
        check_pattern(values.get("name_pattern", ""), "Name pattern")
        check_bounds("Partitions", values.get("min_partitions"), values.get("max_partitions"))
        check_bounds("Replication factor", values.get("min_replication_factor"), values.get("max_replication_factor"))
    except PolicyInputError as exc:
        raise ConsoleError(exc.message) from None
    rules: list[ConfigRule] = values.get("config_rules") or []
    fields = {key: values.get(key) for key in ("min_partitions", "max_partitions", "min_replication_factor",
                                               "max_replication_factor")}
    fields.update({key: (values.get(key) or "").strip() for key in (
        "applies_to", "name_pattern", "name_message", "partitions_message", "replication_message")})
    fields["config_rules"] = [rule.as_dict() for rule in rules]
    if not (fields["name_pattern"] or rules or any(fields[k] is not None for k in (
            "min_partitions", "max_partitions", "min_replication_factor", "max_replication_factor"))):
        raise ConsoleError(MSG_EMPTY_POLICY)
    return fields


def _snapshot(row: TopicPolicy) -> dict:
    return {field: getattr(row, field) for field in (
        "applies_to", "name_pattern", "name_message", "min_partitions", "max_partitions", "partitions_message",
        "min_replication_factor", "max_replication_factor", "replication_message", "config_rules")}


def topic_policy_save(*, actor: Actor, cluster: str, name: str, values: dict, reason: str = "",
                      create: bool = True) -> TopicPolicy:
    """Creates (or, without `create`, replaces) a cluster's policy; the audit keeps the policy before and after.
    `values`: applies_to, name_pattern, min/max partitions and replication factor, their messages, and
    config_rules (ConfigRule values)."""
    cluster_get(cluster)
    name = _valid_name(name)
    fields = _fields(values)
    existing = TopicPolicy.objects.filter(cluster=cluster, name=name).first()
    if create and existing is not None:
        raise ConsoleError(MSG_POLICY_EXISTS.format(cluster=cluster, name=name))
    if not create and existing is None:
        raise NotFound(MSG_NO_POLICY.format(cluster=cluster, name=name))
    before = _snapshot(existing) if existing else None
    try:
        with transaction.atomic():
            row, _ = TopicPolicy.objects.update_or_create(cluster=cluster, name=name,
                                                          defaults={**fields, "updated_by": actor.name})
    except IntegrityError as exc:  # another admin created it meanwhile
        raise ConsoleError(MSG_POLICY_EXISTS.format(cluster=cluster, name=name)) from exc
    audit_record(actor=actor, action="topic.policy.create" if existing is None else "topic.policy.update",
                 outcome=AuditEvent.Outcome.SUCCESS, cluster=cluster, target=f"policy:{name}", reason=reason,
                 params={"name": name}, before=before, after=_snapshot(row))
    return row


def topic_policy_delete(*, actor: Actor, cluster: str, name: str, reason: str = "") -> None:
    row = TopicPolicy.objects.filter(cluster=cluster, name=name).first()
    if row is None:
        raise NotFound(MSG_NO_POLICY.format(cluster=cluster, name=name))
    before = _snapshot(row)
    row.delete()
    audit_record(actor=actor, action="topic.policy.delete", outcome=AuditEvent.Outcome.SUCCESS, cluster=cluster,
                 target=f"policy:{name}", reason=reason, params={"name": name}, before=before)


def policy_check(*, actor: Actor, cluster: str, action: str, shape: TopicShape,
                 aspects: frozenset[str] = EVERY_ASPECT, config_keys: frozenset[str] | None = None,
                 override: bool = False, reason: str = "", params: dict | None = None,
                 policies=None) -> list[Violation]:
    """Before a change: the rules of the cluster's policies that `shape` (the topic as the change leaves it)
    breaks, among those of what the change touches. None: returns []. Some, without `override`: an audited
    refusal, then PolicyRefused. With `override` (admins only, with a reason): an audited override event
    naming every rule broken, and the violations are returned for the change's own audit."""
    policies = cluster_policies(cluster) if policies is None else policies
    violations = evaluate(policies, shape, aspects=aspects, config_keys=config_keys)
    if not violations:
        return []
    target = f"topic:{shape.name}"
    broken = [v.as_dict() for v in violations]
    if not override:
        audit_refusal(actor=actor, action=action, cluster=cluster, target=target, reason=reason,
                      params={**(params or {}), "policy_violations": broken}, error=refusal_text(violations))
        raise PolicyRefused(violations)
    if actor.user is not None:
        require_role(actor.user, Role.ADMIN)
    if not reason.strip():
        raise ConsoleError(MSG_OVERRIDE_REASON)
    audit_record(actor=actor, action=OVERRIDE_ACTION, outcome=AuditEvent.Outcome.SUCCESS, cluster=cluster,
                 target=target, reason=reason, params={"action": action, **(params or {}),
                                                       "policy_violations": broken})
    return violations


__all__ = ["OVERRIDE_ACTION", "PolicyRefused", "policy_check", "policy_from_row", "topic_policy_delete",
           "topic_policy_save"]
