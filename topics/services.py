"""Changes to topics and brokers. Each asks the broker to validate first, then acts inside an audit record."""

from __future__ import annotations

import re
import time

from changes.guard import change_guard
from console.audit.actor import Actor
from console.audit.guarded import change_checked, guarded_change
from console.audit.services import audited
from console.witness.guard import witness_topic_guard
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import BROKER, EARLIEST, LATEST, TOPIC, PartitionRef
from topics import config_cache
from topics.diffing import PurgeRow, check_config_request, purge_plan
from topics.policies.rules import CONFIGS, PARTITIONS, TopicShape
from topics.policies.selectors import cluster_policies, config_change_shapes, create_shape
from topics.policies.services import policy_check
from topics.selectors import broker_values_invalidate, topic_snapshot_note
from topics.table import TopicRow

TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
MSG_BAD_TOPIC_NAME = "Topic names use letters, digits, '.', '_' and '-' only, at most 249 characters ('{name}')."
MSG_CONFIRM_MISMATCH = "Type the topic name '{name}' exactly to confirm the deletion."
MSG_NO_SUCH_PARTITIONS = "Topic '{topic}' has no partition {partitions}."
MSG_NOTHING_TO_PURGE = "Nothing to purge: every chosen partition is already empty below that offset."


def topic_create(*, actor: Actor, cluster: str, name: str, partitions: int, replication_factor: int,
                 configs: dict[str, str], reason: str = "", policy_override: bool = False) -> None:
    """CreateTopics, validated by the broker first (validate_only) so bad input changes nothing, then by the
    cluster's topic policies (topics/policies; an admin may override them with a reason)."""
    if not TOPIC_NAME.match(name) or name in (".", ".."):
        raise ConsoleError(MSG_BAD_TOPIC_NAME.format(name=name))
    admin = cluster_admin(cluster)
    admin.create_topic(name, partitions=partitions, replication_factor=replication_factor, configs=configs,
                       validate_only=True)
    params = {"partitions": partitions, "replication_factor": replication_factor, "configs": configs}
    policies = cluster_policies(cluster)
    if policies:
        shape = create_shape(cluster, name, partitions=partitions, replication_factor=replication_factor,
                             configs=configs, policies=policies)
        overridden = policy_check(actor=actor, cluster=cluster, action="topic.create", shape=shape,
                                  override=policy_override, reason=reason, params=params, policies=policies)
        if overridden:
            params = {**params, "policy_overridden": [v.as_dict() for v in overridden]}
    with audited(actor=actor, action="topic.create", cluster=cluster, target=f"topic:{name}", reason=reason,
                 params=params) as record:
        admin.create_topic(name, partitions=partitions, replication_factor=replication_factor, configs=configs)
        record.after = params
    topic_snapshot_note(cluster, name, at_least_partitions=partitions, created=TopicRow(
        name=name, partitions=partitions, replication_factor=replication_factor, under_replicated=0, offline=0,
        messages=0, internal=False))


def _configs_alter(*, actor: Actor, cluster: str, kind: str, name: str, target: str, set_values: dict[str, str],
                   delete: list[str], reason: str, after_validation=None) -> dict:
    check_config_request(set_values, delete)
    admin = cluster_admin(cluster)
    admin.alter_configs(kind, name, set_values=set_values, delete=delete, validate_only=True)
    if after_validation is not None:  # the broker's own message comes first for a value it refuses
        after_validation()
    keys = sorted(set(set_values) | set(delete))
    current = admin.describe_configs(kind, [name])[name]
    before = {k: {"value": current[k].value, "source": current[k].source} if k in current else None for k in keys}
    with audited(actor=actor, action=f"{kind}.config.alter", cluster=cluster, target=target, reason=reason,
                 params={"set": set_values, "delete": delete}, before=before) as record:
        admin.alter_configs(kind, name, set_values=set_values, delete=delete)
        after = _read_back(admin, kind, name, set_values, delete)
        record.after = {k: {"value": after[k].value, "source": after[k].source} if k in after else None for k in keys}
    return record.after


def _read_back(admin, kind: str, name: str, set_values: dict[str, str], delete: list[str], attempts: int = 10):
    """Brokers apply dynamic configs from the metadata log a moment after acknowledging: wait until they show."""
    for _ in range(attempts):
        current = admin.describe_configs(kind, [name])[name]
        applied = all(k in current and current[k].value == v for k, v in set_values.items()) and all(
            k not in current or current[k].source not in ("topic", "dynamic-broker") for k in delete)
        if applied:
            break
        time.sleep(0.2)
    return current


def topic_configs_alter(*, actor: Actor, cluster: str, topic: str, set_values: dict[str, str], delete: list[str],
                        reason: str = "", policy_override: bool = False) -> dict:
    """IncrementalAlterConfigs on a topic: sets or removes overrides; the audit keeps values before and after.
    Refused for the audit witness topic (retention.ms would let it drop what it holds), and where the configs it
    leaves break a rule of the cluster's topic policies on the keys it changes (unless an admin overrides)."""
    witness_topic_guard(actor=actor, action="topic.config.alter", cluster=cluster, topic=topic, what="reconfigure",
                        reason=reason, params={"set": set_values, "delete": delete})
    change_guard(actor=actor, action="topic.config.alter", cluster=cluster, target=f"topic:{topic}", reason=reason,
                 params={"set": set_values, "delete": delete})
    result = _configs_alter(actor=actor, cluster=cluster, kind=TOPIC, name=topic, target=f"topic:{topic}",
                            set_values=set_values, delete=delete, reason=reason,
                            after_validation=lambda: _config_policy_check(
                                actor=actor, cluster=cluster, topic=topic, set_values=set_values, delete=delete,
                                reason=reason, override=policy_override))
    config_cache.forget(cluster, [topic])  # the list shows the new values at once
    return result


def _config_policy_check(*, actor: Actor, cluster: str, topic: str, set_values: dict[str, str], delete: list[str],
                         reason: str, override: bool) -> None:
    policies = cluster_policies(cluster)
    if not policies:
        return
    shape = config_change_shapes(cluster, [topic], set_values=set_values, delete=delete, policies=policies).get(topic)
    if shape is not None:
        policy_check(actor=actor, cluster=cluster, action="topic.config.alter", shape=shape,
                     aspects=frozenset({CONFIGS}), config_keys=frozenset(set_values) | frozenset(delete),
                     override=override, reason=reason, params={"set": set_values, "delete": delete},
                     policies=policies)


def broker_configs_alter(*, actor: Actor, cluster: str, broker_id: int, set_values: dict[str, str],
                         delete: list[str], reason: str = "") -> dict:
    """IncrementalAlterConfigs on one broker's dynamic configs (the broker refuses read-only ones)."""
    result = _configs_alter(actor=actor, cluster=cluster, kind=BROKER, name=str(broker_id),
                            target=f"broker:{broker_id}", set_values=set_values, delete=delete, reason=reason)
    broker_values_invalidate(cluster)
    return result


def topic_partitions_add(*, actor: Actor, cluster: str, topic: str, new_total: int, reason: str = "",
                         policy_override: bool = False) -> None:
    """CreatePartitions. Keys hash to new partitions afterwards, so per-key ordering breaks across the change.
    Refused for the audit witness topic (its one partition is its total order), and above a topic policy's
    maximum (unless an admin overrides)."""
    witness_topic_guard(actor=actor, action="topic.partitions.add", cluster=cluster, topic=topic,
                        what="add partitions to", reason=reason, params={"new_total": new_total})
    admin = cluster_admin(cluster)
    current = admin.describe_topics([topic])[topic].partition_count
    admin.add_partitions(topic, new_total=new_total, validate_only=True)
    policy_check(actor=actor, cluster=cluster, action="topic.partitions.add",
                 shape=TopicShape(name=topic, partitions=new_total), aspects=frozenset({PARTITIONS}),
                 override=policy_override, reason=reason, params={"new_total": new_total})
    with audited(actor=actor, action="topic.partitions.add", cluster=cluster, target=f"topic:{topic}", reason=reason,
                 params={"new_total": new_total}, before={"partitions": current}) as record:
        admin.add_partitions(topic, new_total=new_total)
        # Success means the controller committed the new count; the audit records what Kafka accepted.
        record.after = {"partitions": new_total}
    _wait_for_partitions(admin, topic, new_total)
    topic_snapshot_note(cluster, topic, at_least_partitions=new_total)


def _wait_for_partitions(admin, topic: str, total: int, attempts: int = 15) -> None:
    """A broker applies the controller's new partitions from the metadata log a moment after the answer (seen in
    CI): wait briefly, so that the page or command that follows describes what was just done."""
    for _ in range(attempts):
        try:
            if admin.describe_topics([topic])[topic].partition_count >= total:
                return
        except KafkaGatewayError:  # deleted or unreachable since: the change itself is done and audited
            return
        time.sleep(0.2)


def topic_delete(*, actor: Actor, cluster: str, topic: str, confirm: str, reason: str = "") -> None:
    """DeleteTopics, only when the caller typed the topic's name; never the audit witness topic."""
    change_checked(confirm=confirm, name=topic, what="topic", reason=reason, reason_required=False,
                   message=MSG_CONFIRM_MISMATCH.format(name=topic))
    witness_topic_guard(actor=actor, action="topic.delete", cluster=cluster, topic=topic, what="delete", reason=reason)
    change_guard(actor=actor, action="topic.delete", cluster=cluster, target=f"topic:{topic}", reason=reason)
    admin = cluster_admin(cluster)
    described = admin.describe_topics([topic])[topic]  # TopicNotFound before any audit row
    before = {"partitions": described.partition_count, "replication_factor": described.replication_factor,
              "topic_id": described.topic_id}
    with guarded_change(actor=actor, action="topic.delete", cluster=cluster, target=f"topic:{topic}", reason=reason,
                        before=before, reason_required=False) as record:
        admin.delete_topic(topic)
        record.after = None  # read back: the topic is gone (DeleteTopics answered for it)
    topic_snapshot_note(cluster, topic, deleted=True)


def topic_purge_preview(*, cluster: str, topic: str, partitions: list[int] | None = None,
                        before: int | None = None) -> list[PurgeRow]:
    """How many records each partition would lose. No partitions: all of them; no offset: everything present now."""
    admin = cluster_admin(cluster)
    known = {p.partition for p in admin.describe_topics([topic])[topic].partitions}
    chosen = sorted(set(partitions)) if partitions else sorted(known)
    unknown = [p for p in chosen if p not in known]
    if unknown:
        raise ConsoleError(MSG_NO_SUCH_PARTITIONS.format(topic=topic, partitions=", ".join(map(str, unknown))))
    refs = [PartitionRef(topic, p) for p in chosen]
    offsets = admin.list_offsets_many(refs, [EARLIEST, LATEST])
    return purge_plan(topic, {p: before for p in chosen}, offsets[EARLIEST], offsets[LATEST])


def topic_records_purge(*, actor: Actor, cluster: str, topic: str, partitions: list[int] | None = None,
                        before: int | None = None, reason: str = "") -> list[PurgeRow]:
    """DeleteRecords up to the previewed offsets; the audit keeps each partition's log start before and after.
    Refused for the audit witness topic."""
    witness_topic_guard(actor=actor, action="topic.records.purge", cluster=cluster, topic=topic, what="purge",
                        reason=reason, params={"partitions": partitions, "before": before})
    change_guard(actor=actor, action="topic.records.purge", cluster=cluster, target=f"topic:{topic}", reason=reason,
                 params={"partitions": partitions, "before": before})
    plan = [row for row in topic_purge_preview(cluster=cluster, topic=topic, partitions=partitions, before=before)
            if row.records_deleted > 0]
    if not plan:
        raise ConsoleError(MSG_NOTHING_TO_PURGE)
    before_starts = {str(r.partition): r.log_start for r in plan}
    with audited(actor=actor, action="topic.records.purge", cluster=cluster, target=f"topic:{topic}", reason=reason,
                 params={"delete_before": {str(r.partition): r.target for r in plan}}, before=before_starts) as record:
        low = cluster_admin(cluster).delete_records({PartitionRef(topic, r.partition): r.target for r in plan})
        record.after = {str(ref.partition): offset for ref, offset in sorted(low.items())}
    topic_snapshot_note(cluster, topic)
    return plan
