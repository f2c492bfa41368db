"""Applying a configuration file: exactly the plan the caller saw (its fingerprint), through the services the pages
use (topics, ACLs, quotas, SCRAM users, topic policies, masking rules, connectors), with their checks and their
audit rows, all under one change set: a `config.apply` intent and outcome whose correlation id every row of the
apply names (params["change_set"]). The file is kept as the cluster's last applied one, for the drift page."""

from __future__ import annotations

import os

from django.utils import timezone

from access import services as access
from access.bindings import bindings_for
from config_as_code.document import DEFAULT, digest
from config_as_code.models import AppliedConfig
from config_as_code.plan import CHANGE, CREATE, DELETE, Change, Plan
from config_as_code.selectors import plan_for
from connect import services as connectors
from connect.masking import mask_config
from connect.registration import connect_client, connect_cluster_get
from connect.selectors import declared_secrets
from console.accounts.roles import Role, require_role
from console.audit.actor import Actor
from console.audit.services import audit_refusal, audited, change_set
from console.clusters.client_settings import check_secret_env_name
from console.clusters.selectors import cluster_get
from console.errors import Conflict, ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import AclEntry
from masking import services as masking
from topics import services as topics
from topics.policies import services as policies
from topics.policies.rules import parse_config_rule

ACTION = "config.apply"
MSG_PLAN_MOVED = ("The cluster (or the file) changed since the plan {expected}: the plan is {now} now. Plan again, "
                  "read it, and apply that fingerprint.")
MSG_PROBLEMS = "The plan has problems, so nothing is applied: {problems}"
MSG_NOTHING = "The cluster already matches the file: nothing to apply."
MSG_PARTLY = "{error} ({done} of {total} changes were applied before it; the audit log's change set {change_set} lists them)"
MSG_PASSWORD_ENV = "scram_users.{user}: the variable {env} is empty or not set."
MSG_REASON = "A reason is required: it goes into the audit log."


def _quota_entity(key: str) -> dict:
    parts = dict(part.split("=", 1) for part in key.split(","))
    user, client_id = parts.get("user"), parts.get("client_id")
    return {"user": None if user in (None, DEFAULT) else user, "client_id": None if client_id in (None, DEFAULT)
            else client_id, "user_is_default": user == DEFAULT, "client_id_is_default": client_id == DEFAULT}


def _password(user: str, env: str) -> str:
    check_secret_env_name(f"scram_users.{user}.password_env", env)
    value = os.environ.get(env, "")
    if not value:
        raise ConsoleError(MSG_PASSWORD_ENV.format(user=user, env=env))
    return value


def _acl_entries(changes: list[Change]) -> list[AclEntry]:
    entries = []
    for change in changes:
        b = change.after or change.before
        entries += bindings_for(principal=b["principal"], resource_type=b["resource_type"],
                                resource_name=b["resource_name"], pattern_type=b["pattern_type"],
                                operations=[b["operation"]], permission=b["permission"], host=b["host"])
    return entries


def _one(actor: Actor, cluster: str, change: Change, reason: str) -> None:
    """One change through its service (ACLs are made in one batch per action, see config_apply)."""
    section, action = change.section, change.action
    if section == "topics":
        if action == CREATE:
            topics.topic_create(actor=actor, cluster=cluster, name=change.key, partitions=change.after["partitions"],
                                replication_factor=change.after["replication_factor"],
                                configs=change.after["configs"], reason=reason)
        elif action == CHANGE:
            if "partitions" in change.after:
                topics.topic_partitions_add(actor=actor, cluster=cluster, topic=change.key,
                                            new_total=change.after["partitions"], reason=reason)
            wanted = change.after.get("configs", {})
            if wanted:
                topics.topic_configs_alter(actor=actor, cluster=cluster, topic=change.key,
                                           set_values={k: v for k, v in wanted.items() if v is not None},
                                           delete=[k for k, v in wanted.items() if v is None], reason=reason)
        else:
            topics.topic_delete(actor=actor, cluster=cluster, topic=change.key, confirm=change.key, reason=reason)
    elif section == "quotas":
        entity = _quota_entity(change.key)
        if action == DELETE:
            access.client_quota_alter(actor=actor, cluster=cluster, **entity, set_values={},
                                      delete=sorted(change.before), reason=reason)
        else:
            before = change.before or {}
            access.client_quota_alter(actor=actor, cluster=cluster, **entity, set_values=change.after,
                                      delete=sorted(set(before) - set(change.after)), reason=reason)
    elif section == "scram_users":
        if action == DELETE:
            for mechanism in change.before["mechanisms"]:
                access.scram_credential_delete(actor=actor, cluster=cluster, user=change.before["user"],
                                               mechanism=mechanism, confirm=change.before["user"], reason=reason)
        else:
            password = _password(change.key, change.after["password_env"])
            for mechanism in change.after["add"]:
                access.scram_credential_set(actor=actor, cluster=cluster, user=change.key, mechanism=mechanism,
                                            password=password, reason=reason)
    elif section == "topic_policies":
        if action == DELETE:
            policies.topic_policy_delete(actor=actor, cluster=cluster, name=change.key, reason=reason)
        else:
            values = {**change.after, "config_rules": [parse_config_rule(r) for r in change.after["config_rules"]]}
            policies.topic_policy_save(actor=actor, cluster=cluster, name=change.key, values=values, reason=reason,
                                       create=action == CREATE)
    elif section == "masking_rules":
        if action == DELETE:
            masking.mask_rule_delete(actor=actor, cluster=cluster, rule_id=change.before["id"], reason=reason)
        else:
            rule = change.after
            masking.mask_rule_create(actor=actor, cluster=cluster, topic_pattern=rule["topic_pattern"],
                                     selector=rule["selector"], target=rule["target"], action=rule["action"],
                                     replacement=rule["replacement"], keep_last=rule["keep_last"],
                                     roles=rule["roles"], reason=reason)
    elif section == "connectors":
        connect, _, name = change.key.partition("/")
        if action == CREATE:
            connectors.connector_create(actor=actor, cluster=cluster, connect=connect, name=name,
                                        config=change.after, reason=reason)
        elif action == CHANGE:
            # The whole configuration as the file has it; a secret left as ******** keeps the worker's value.
            desired = {k: v for k, v in change.after.items() if v is not None}
            client = connect_client(connect_cluster_get(cluster, connect))
            current = client.connector(name).config
            shown = mask_config(current, declared_secrets(client, current.get("connector.class", "")))
            shown.pop("name", None)
            config = {**{k: v for k, v in shown.items() if k not in change.after}, **desired}
            connectors.connector_edit(actor=actor, cluster=cluster, connect=connect, name=name, config=config,
                                      reason=reason)
        else:
            connectors.connector_delete(actor=actor, cluster=cluster, connect=connect, name=name, confirm=name,
                                        reason=reason)


def config_apply(*, actor: Actor, cluster: str, text: str, expected_fingerprint: str, allow_deletes: bool = False,
                 reason: str) -> tuple[Plan, AppliedConfig]:
    """Plans the file again from the cluster now, refuses (audited, nothing changed) unless the plan is the one
    the caller saw, then makes each change through its service. A failing change stops the apply: the changes
    before it stay made (Kafka has no transaction across them), the error says how many, and the audit log's change
    set lists them."""
    require_role(actor.user, Role.ADMIN)
    cluster_get(cluster)
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    plan = plan_for(cluster, text, allow_deletes=allow_deletes)
    params = {"fingerprint": plan.fingerprint, "file_digest": plan.file_digest, "allow_deletes": allow_deletes,
              "sections": list(plan.sections), "counts": plan.counts()}
    target = f"config:{cluster}"
    refusal = None
    if expected_fingerprint != plan.fingerprint:
        refusal = Conflict(MSG_PLAN_MOVED.format(expected=expected_fingerprint, now=plan.fingerprint))
    elif plan.problems:
        refusal = ConsoleError(MSG_PROBLEMS.format(problems="; ".join(plan.problems)))
    if refusal is not None:
        audit_refusal(actor=actor, action=ACTION, cluster=cluster, target=target, reason=reason, params=params,
                      error=refusal.message)
        raise refusal
    applicable = list(plan.applicable)
    if not applicable:
        raise ConsoleError(MSG_NOTHING)
    done = 0
    with audited(actor=actor, action=ACTION, cluster=cluster, target=target, reason=reason, params=params) as record:
        with change_set(record.intent.correlation_id):
            try:
                acl_creates = [c for c in applicable if c.section == "acls" and c.action == CREATE]
                acl_deletes = [c for c in applicable if c.section == "acls" and c.action == DELETE]
                for change in applicable:
                    if change.section != "acls":
                        _one(actor, cluster, change, reason)
                        done += 1
                if acl_creates:
                    access.acls_create(actor=actor, cluster=cluster, entries=_acl_entries(acl_creates), reason=reason)
                    done += len(acl_creates)
                if acl_deletes:
                    entries = _acl_entries(acl_deletes)
                    access.acls_delete(actor=actor, cluster=cluster, entries=entries, confirm=str(len(entries)),
                                       reason=reason)
                    done += len(acl_deletes)
            except (ConsoleError, KafkaGatewayError) as exc:
                exc.message = MSG_PARTLY.format(error=exc.message, done=done, total=len(applicable),
                                                change_set=record.intent.correlation_id)
                raise
        applied = AppliedConfig.objects.create(
            cluster=cluster, text=text, digest=digest(text), plan_fingerprint=plan.fingerprint,
            allow_deletes=allow_deletes, change_set=record.intent.correlation_id, applied_at=timezone.now(),
            applied_by=actor.name, changes=len(applicable))
        record.after = {"applied": len(applicable), "applied_config": applied.pk}
    return plan, applied
