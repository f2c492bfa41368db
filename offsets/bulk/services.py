"""Bulk actions on many groups of any type: delete them, delete their offsets of one topic, or the same offset reset
for each. One preview lists every group's change (or why it is left alone), one typed phrase confirms it, then
each group is changed and audited on its own, inside one audited batch. Resets and offset deletes run through the
very services a single group's page uses (offsets.resets.services, offsets.services), with their guarantees: a
group that became active, or whose offsets moved since the preview, is refused and listed by name. Each group
follows its own kind (offsets/kinds): a share group resets as kafka-share-groups does, a streams group as
kafka-streams-groups does; consumer groups alone are deleted in one DeleteGroups."""

from __future__ import annotations

from collections.abc import Sequence

from console.audit.actor import Actor
from console.audit.batch import AuditBatch, BatchItem, BatchOutcome
from console.audit.models import AuditEvent
from console.audit.services import audit_refusal
from console.bulk import check_confirmation, chosen_names, confirmation_phrase
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from offsets import group_table
from offsets.bulk.planning import (
    DELETE, DELETE_OFFSETS, MSG_MEMBERS, MSG_NO_STARTS, MSG_STREAMS_OFFSETS, MSG_UNKNOWN_ACTION, RESET, VERBS,
    GroupBulkPlan, GroupChange, plan_delete, plan_delete_offsets,
)
from offsets.kinds import CONSUMER, KIND_NAMED, SHARE, STREAMS
from offsets.kinds.base import GroupKind
from offsets.models import GROUP_ID_MAX_STORED
from offsets.resets.planning import AllTopics, Strategy, TopicScope, describe_strategy
from offsets.resets.preview import reset_preview
from offsets.resets.services import group_offsets_reset
from offsets.resets.totals import plan_totals
from offsets.services import group_delete, group_offsets_delete, offsets_json, scope_text, share_offsets_delete

MSG_REASON = "A reason is required: it goes into the audit log of every group."
MSG_NOTHING_TO_DO = "Nothing to do: every chosen group is left alone."
MSG_TOPIC = "Give the topic whose committed offsets are deleted."
MSG_RESET = "Give a reset scope and strategy."
MSG_TOO_LONG = "its id is longer than {limit} characters: the audit log could not name it"


def _names(names: list[str]) -> list[str]:
    return chosen_names(names, noun="group")


def group_kinds(cluster: str, names: list[str]) -> dict[str, GroupKind]:
    """Each name's kind from one ListGroups of every type (a name it does not list is a consumer group, whose
    preview then says it does not exist)."""
    wanted = set(names)
    typed = {listing.group_id: listing.group_type for listing in cluster_admin(cluster).list_groups_of_every_type()
             if listing.group_id in wanted}
    # "classic" (and anything unlisted) is a consumer group too.
    return {name: KIND_NAMED.get(typed.get(name, ""), CONSUMER) for name in names}


def _reset_change(cluster: str, group: str, scope, strategy: Strategy, kind: GroupKind) -> GroupChange:
    try:
        preview = reset_preview(cluster, group, scope, strategy, kind=kind)
    except (ConsoleError, KafkaGatewayError) as exc:
        return GroupChange(group, "?", 0, "", exc.message, kind=kind.name)
    plan = preview.plan
    parts = [f"{t.topic}: {t.partitions} partition(s), re-read {t.reread}, skip {t.skipped}"
             for t in plan_totals(plan)]
    refused = ""
    if not preview.allowed or preview.members:
        refused = MSG_MEMBERS.format(members=preview.members, state=preview.state)
    elif not plan.targets and not plan.deletions:
        refused = kind.msg_empty_plan
    return GroupChange(group, preview.state, preview.members, "; ".join(parts) or "no partitions", refused,
                       fingerprint=preview.fingerprint, kind=kind.name)


def _typed_change(cluster: str, group: str, kind: GroupKind, action: str, topic: str) -> GroupChange:
    """A share or streams group's delete or offsets delete, as its own page would preview it."""
    try:
        summary = kind.delete_summary(cluster, group)
    except (ConsoleError, KafkaGatewayError) as exc:
        return GroupChange(group, "?", 0, "", exc.message, kind=kind.name)
    refused = MSG_MEMBERS.format(members=summary.members, state=summary.state) if summary.members else ""
    if action == DELETE:
        return GroupChange(group, summary.state, summary.members,
                           f"delete ({summary.partitions} partition(s) with offsets)", refused, kind=kind.name)
    if kind is STREAMS:
        return GroupChange(group, summary.state, summary.members, "", MSG_STREAMS_OFFSETS, kind=kind.name)
    starts = [ref for ref in kind.positions(cluster, group) if ref.topic == topic]
    return GroupChange(group, summary.state, summary.members,
                       f"delete start offsets of {topic} on {len(starts)} partition(s)",
                       refused or ("" if starts else MSG_NO_STARTS.format(topic=topic)), kind=kind.name)


def groups_bulk_preview(*, cluster: str, action: str, names: list[str], topic: str = "",
                        scope: AllTopics | Sequence[TopicScope] | None = None,
                        strategy: Strategy | None = None) -> GroupBulkPlan:
    """Reads only. Delete and delete-offsets: one DescribeGroups and the batched OffsetFetch for all the groups;
    reset: each group's reset preview (what `kafka-consumer-groups --reset-offsets --dry-run` prints)."""
    if action not in VERBS:
        raise ConsoleError(MSG_UNKNOWN_ACTION.format(action=action))
    names = _names(names)
    kinds = group_kinds(cluster, names)
    if action == RESET:
        if scope is None or strategy is None:
            raise ConsoleError(MSG_RESET)
        plan = GroupBulkPlan(RESET, tuple(_reset_change(cluster, g, scope, strategy, kinds[g]) for g in names))
    else:
        if action == DELETE_OFFSETS and not topic:
            raise ConsoleError(MSG_TOPIC)
        consumers = [g for g in names if kinds[g] is CONSUMER]
        changes: dict[str, GroupChange] = {}
        if consumers:
            admin = cluster_admin(cluster)
            described = admin.describe_groups(consumers)
            committed = admin.group_offsets(consumers, skip_failed=True)
            found = (plan_delete(consumers, described, committed) if action == DELETE
                     else plan_delete_offsets(consumers, described, committed, topic))
            changes.update((c.group, c) for c in found.changes)
        for g in names:
            if kinds[g] is not CONSUMER:
                changes[g] = _typed_change(cluster, g, kinds[g], action, topic)
        plan = GroupBulkPlan(action, tuple(changes[g] for g in names))
    too_long = MSG_TOO_LONG.format(limit=GROUP_ID_MAX_STORED)
    return GroupBulkPlan(plan.action, tuple(
        GroupChange(c.group, c.state, c.members, c.summary, too_long, c.fingerprint, c.before, c.kind)
        if len(c.group) > GROUP_ID_MAX_STORED else c for c in plan.changes))


def groups_bulk_execute(*, actor: Actor, cluster: str, action: str, names: list[str], confirm: str, reason: str,
                        topic: str = "", scope: AllTopics | Sequence[TopicScope] | None = None,
                        strategy: Strategy | None = None, fingerprints: dict[str, str] | None = None
                        ) -> BatchOutcome:
    """`names`: the groups the preview would change; `confirm`: the phrase it asked for; `fingerprints`: a reset
    preview's per group (a group whose offsets moved since is refused, as a single reset is)."""
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    names = _names(names)
    check_confirmation(confirm, confirmation_phrase(VERBS.get(action, action), len(names), "group"))
    if action == RESET:
        kinds = group_kinds(cluster, names)
        params = {"scope": scope_text(scope), "strategy": describe_strategy(strategy)}
        return _run_each(actor, cluster, action, names, reason, params,
                         lambda g: group_offsets_reset(
                             actor=actor, cluster=cluster, group=g, scope=scope, strategy=strategy, reason=reason,
                             confirm=g, expected_fingerprint=(fingerprints or {}).get(g), kind=kinds[g]),
                         lambda g: kinds[g].reset_action)
    plan = groups_bulk_preview(cluster=cluster, action=action, names=names, topic=topic)
    if not plan.to_change:
        raise ConsoleError(MSG_NOTHING_TO_DO + " " + "; ".join(f"{c.group}: {c.refused}" for c in plan.changes))
    chosen = {c.group: c.kind for c in plan.to_change}
    refused = {c.group: c.refused for c in plan.left_alone}
    kind_of = {c.group: c.kind for c in plan.changes}
    if action == DELETE_OFFSETS:
        def delete_offsets_of(g: str):
            if g not in chosen:
                return _refuse(refused[g])
            if chosen[g] == SHARE.name:
                return share_offsets_delete(actor=actor, cluster=cluster, group=g, topic=topic, confirm=g,
                                            reason=reason)
            return group_offsets_delete(actor=actor, cluster=cluster, group=g, topic=topic, partitions=None,
                                        confirm=g, reason=reason)

        return _run_each(actor, cluster, action, names, reason, {"topic": topic}, delete_offsets_of,
                         lambda g: "share-group.offsets.delete" if kind_of[g] == SHARE.name
                         else "group.offsets.delete")
    if all(kind == CONSUMER.name for kind in kind_of.values()):
        return _delete(actor, cluster, names, reason, plan)
    return _run_each(actor, cluster, action, names, reason, {}, lambda g: (
        group_delete(actor=actor, cluster=cluster, group=g, confirm=g, reason=reason, kind=KIND_NAMED[chosen[g]])
        if g in chosen else _refuse(refused[g])), lambda g: KIND_NAMED[kind_of[g]].delete_action)


class _LeftAlone(ConsoleError):
    pass


def _refuse(message: str):
    raise _LeftAlone(message)


def _run_each(actor: Actor, cluster: str, action: str, names: list[str], reason: str, params: dict, change,
              item_action) -> BatchOutcome:
    """Each group through its own service (which audits it); a refusal before that service wrote anything is
    audited here (as `item_action(group)`), so every group of the batch has its event."""
    batch = AuditBatch(actor=actor, action=f"group.bulk.{action}", cluster=cluster, reason=reason, names=names,
                       params=params)
    outcome = BatchOutcome(action=batch.action)
    for group in names:
        last = AuditEvent.objects.order_by("-seq").values_list("seq", flat=True).first() or 0
        try:
            outcome.after[group] = change(group)
            outcome.done.append(group)
        except (ConsoleError, KafkaGatewayError) as exc:
            outcome.failed[group] = exc.message
            if not AuditEvent.objects.filter(seq__gt=last, target=f"group:{group}").exists():
                audit_refusal(actor=actor, action=item_action(group), cluster=cluster, target=f"group:{group}",
                              reason=reason, params={**params, "batch": str(batch.id)}, error=exc.message)
    return batch.finish(outcome)


def _delete(actor: Actor, cluster: str, names: list[str], reason: str, plan: GroupBulkPlan) -> BatchOutcome:
    """One DeleteGroups for every group the plan deletes; the committed offsets each loses go into its event."""
    batch = AuditBatch(actor=actor, action="group.bulk.delete", cluster=cluster, reason=reason, names=names)
    for change in plan.left_alone:
        audit_refusal(actor=actor, action=CONSUMER.delete_action, cluster=cluster, target=f"group:{change.group}",
                      reason=reason, params={"batch": str(batch.id)}, error=change.refused)
    admin = cluster_admin(cluster)
    items = [BatchItem(c.group, f"group:{c.group}", before=offsets_json(c.before or {})) for c in plan.to_change]
    outcome = batch.run_items(
        item_action=CONSUMER.delete_action, items=items,
        run=lambda chosen: {f.name: f.message for f in admin.delete_groups(chosen).values()},
        read_after=lambda done: {g: CONSUMER.after_delete for g in done})
    for group in outcome.done:
        group_table.note_deleted(cluster, group)
    outcome.failed.update({c.group: c.refused for c in plan.left_alone})
    return batch.finish(outcome)
