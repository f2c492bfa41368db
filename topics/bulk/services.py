"""Bulk actions on many topics at once: delete, change configs, add partitions. A preview lists every change (and
every topic left alone, with why); execution needs the typed phrase of that preview, checks again, then makes one
batched request per hundred topics, with one audit event per topic plus one for the batch. Topic policies apply
to config and partition changes as they do to one topic's."""

from __future__ import annotations

from console.audit.actor import Actor
from console.audit.batch import AuditBatch, BatchItem, BatchOutcome
from console.accounts.roles import Role, require_role
from console.audit.models import AuditEvent
from console.audit.services import audit_record, audit_refusal
from console.witness.config import witness_config
from console.bulk import check_confirmation, chosen_names, confirmation_phrase
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.types import TOPIC
from topics import config_cache
from topics.bulk.planning import (
    AUDIT_ACTIONS, CONFIG, DELETE, MSG_UNKNOWN_ACTION, PARTITIONS, VERBS, TopicBulkPlan, plan_configs, plan_delete,
    plan_partitions,
)
from topics.diffing import check_config_request
from topics.listing import topic_snapshot_note, topic_snapshot_note_partitions
from topics.policies.rules import CONFIGS, PARTITIONS as PARTITIONS_ASPECT, TopicShape, evaluate
from topics.policies.selectors import cluster_policies, config_change_shapes
from topics.policies.services import OVERRIDE_ACTION
from topics.services import MSG_BAD_TOPIC_NAME, TOPIC_NAME

MSG_REASON = "A reason is required: it goes into the audit log of every topic."
MSG_NOTHING_TO_DO = "Nothing to do: every chosen topic is left alone (see why in the preview)."
MSG_PARTITIONS = "Give the new partition count (a number above every chosen topic's count)."


def _witness(cluster: str) -> str | None:
    config = witness_config()
    return config.topic if config is not None and config.cluster == cluster else None


def _names(names: list[str]) -> list[str]:
    chosen = chosen_names(names, noun="topic")
    for name in chosen:
        if not TOPIC_NAME.match(name) or name in (".", ".."):
            raise ConsoleError(MSG_BAD_TOPIC_NAME.format(name=name[:260]))
    return chosen


def topics_bulk_preview(*, cluster: str, action: str, names: list[str], set_values: dict[str, str] | None = None,
                        delete: list[str] | None = None, new_total: int | None = None,
                        policy_override: bool = False) -> TopicBulkPlan:
    """Reads only: one DescribeTopics for the chosen topics, and for changes one DescribeConfigs and one
    validate-only request (so the broker's own refusals show per topic before anything changes)."""
    if action not in VERBS:
        raise ConsoleError(MSG_UNKNOWN_ACTION.format(action=action))
    names = _names(names)
    admin = cluster_admin(cluster)
    described = admin.describe_topics(names, skip_missing=True)
    present = [n for n in names if n in described]
    witness = _witness(cluster)
    if action == DELETE:
        return plan_delete(names, described, witness=witness)
    policies = cluster_policies(cluster)
    if action == PARTITIONS:
        if not new_total or new_total < 1:
            raise ConsoleError(MSG_PARTITIONS)
        growing = [n for n in present if described[n].partition_count < new_total]
        refusals = {f.name: f.message for f in admin.add_partitions_many(
            {n: new_total for n in growing}, validate_only=True).values()} if growing else {}
        violations = {n: [v.text for v in evaluate(policies, TopicShape(name=n, partitions=new_total),
                                                   aspects=frozenset({PARTITIONS_ASPECT}))] for n in present}
        return plan_partitions(names, described, new_total, violations=violations, refusals=refusals,
                               override=policy_override, witness=witness)
    set_values, delete = set_values or {}, delete or []
    check_config_request(set_values, delete)
    current = admin.describe_configs(TOPIC, present, skip_missing=True) if present else {}
    refusals = {f.name: f.message for f in admin.alter_topic_configs_many(
        list(current), set_values=set_values, delete=delete, validate_only=True).values()} if current else {}
    shapes = config_change_shapes(cluster, list(current), set_values=set_values, delete=delete, policies=policies)
    keys = frozenset(set_values) | frozenset(delete)
    violations = {n: [v.text for v in evaluate(policies, shape, aspects=frozenset({CONFIGS}), config_keys=keys)]
                  for n, shape in shapes.items()}
    return plan_configs(names, described, current, set_values=set_values, delete=delete, violations=violations,
                        refusals=refusals, override=policy_override, witness=witness)


def topics_bulk_execute(*, actor: Actor, cluster: str, action: str, names: list[str], confirm: str, reason: str,
                        set_values: dict[str, str] | None = None, delete: list[str] | None = None,
                        new_total: int | None = None, policy_override: bool = False) -> BatchOutcome:
    """`names`: the topics the preview would change, and `confirm` the phrase it asked for (so a topic that
    changed since is reported, not silently dropped). Plans again from the state now; a topic now left alone is
    a failure named with why (its refusal audited); the others go in one batched request per hundred topics."""
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    names = _names(names)
    check_confirmation(confirm, confirmation_phrase(VERBS.get(action, action), len(names), "topic"))
    if policy_override and actor.user is not None:
        require_role(actor.user, Role.ADMIN)
    plan = topics_bulk_preview(cluster=cluster, action=action, names=names, set_values=set_values, delete=delete,
                               new_total=new_total, policy_override=policy_override)
    if not plan.to_change:
        raise ConsoleError(MSG_NOTHING_TO_DO + " " + "; ".join(f"{c.topic}: {c.refused}" for c in plan.changes))
    item_action = AUDIT_ACTIONS[action]
    params = {"set": set_values or {}, "delete": delete or []} if action == CONFIG else (
        {"new_total": new_total} if action == PARTITIONS else {})
    batch = AuditBatch(actor=actor, action=f"topic.bulk.{action}", cluster=cluster, reason=reason, names=names,
                       params={**params, "policy_override": policy_override})
    left_alone = {}
    for change in plan.left_alone:
        left_alone[change.topic] = change.refused
        audit_refusal(actor=actor, action=item_action, cluster=cluster, target=f"topic:{change.topic}",
                      reason=reason, params={**params, "batch": str(batch.id)}, error=change.refused)
    for change in plan.to_change:
        if change.policy:  # only with policy_override: the same audited override a single change makes
            audit_record(actor=actor, action=OVERRIDE_ACTION, outcome=AuditEvent.Outcome.SUCCESS, cluster=cluster,
                         target=f"topic:{change.topic}", reason=reason,
                         params={"action": item_action, **params, "batch": str(batch.id),
                                 "policy_violations": list(change.policy)})
    admin = cluster_admin(cluster)

    def run(chosen: list[str]) -> dict[str, str]:
        if action == DELETE:
            failures = admin.delete_topics(chosen)
        elif action == PARTITIONS:
            failures = admin.add_partitions_many({n: new_total for n in chosen})
        else:
            failures = admin.alter_topic_configs_many(chosen, set_values=set_values or {}, delete=delete or [])
        return {f.name: f.message for f in failures.values()}

    after = {c.topic: c.after for c in plan.to_change}
    items = [BatchItem(c.topic, f"topic:{c.topic}", before=c.before, params=params) for c in plan.to_change]
    outcome = batch.run_items(item_action=item_action, items=items, run=run,
                              read_after=lambda done: {n: after[n] for n in done})
    outcome.failed.update(left_alone)
    _note(cluster, action, outcome.done, new_total)
    return batch.finish(outcome)


def _note(cluster: str, action: str, done: list[str], new_total: int | None) -> None:
    """The topic list shows the console's own changes at once, without a call per topic."""
    if action not in (DELETE, PARTITIONS):
        config_cache.forget(cluster, done)
    if action == DELETE:
        for name in done:
            topic_snapshot_note(cluster, name, deleted=True)
    elif action == PARTITIONS and done:
        topic_snapshot_note_partitions(cluster, {name: new_total for name in done})
