"""A cluster's configuration as it is now, in the file's terms (config_as_code/document.py), read through the same
selectors and gateway calls as the pages: topics (partition count, replication factor, the configs overridden on
the topic), ACLs, client quotas, SCRAM users (mechanisms only), topic policies, masking rules and connectors
(secrets masked). Also the drift: the newest applied file planned against the cluster now."""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.conf import settings

from access import selectors as access
from config_as_code.document import (
    ACL_FIELDS, DEFAULT, SECTIONS, ClusterConfig, DocumentError, MaskSpec, QuotaSpec, ScramSpec, TopicSpec,
    parse_document,
)
from config_as_code.models import AppliedConfig
from config_as_code.plan import Plan, config_plan
from connect.masking import mask_config
from connect.registration import connect_client, connect_clusters
from connect.selectors import declared_secrets
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.types import TOPIC
from masking.selectors import mask_rule_list
from topics.policies.rules import ConfigRule, PolicyInputError, parse_config_rule
from topics.policies.selectors import policy_rows
from topics.serializers import POLICY_FIELDS

CONFIG_BATCH = 200


def managed_topic(name: str, internal: bool) -> bool:
    """Kafka's own topics and the audit witness topic (the console's to keep) are left out of the file."""
    return not internal and name != settings.AUDIT_WITNESS_TOPIC


def _topics(cluster: str) -> dict[str, TopicSpec]:
    admin = cluster_admin(cluster)
    listed = {t.name: t for t in admin.list_topics() if managed_topic(t.name, t.is_internal)}
    names = sorted(listed)
    overrides: dict[str, dict[str, str]] = {}
    for start in range(0, len(names), CONFIG_BATCH):
        described = admin.describe_configs(TOPIC, names[start:start + CONFIG_BATCH], skip_missing=True)
        for name, entries in described.items():
            # A sensitive override's value is never read back; it cannot be compared, so it is left out.
            overrides[name] = {key: entry.value for key, entry in entries.items()
                               if entry.source == "topic" and not entry.sensitive and entry.value is not None}
    return {name: TopicSpec(partitions=len(listed[name].partitions),
                            replication_factor=max((len(p.replicas) for p in listed[name].partitions), default=0),
                            configs=dict(sorted(overrides.get(name, {}).items())))
            for name in names if name in overrides}


def _acls(cluster: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(getattr(e, key) for key in ACL_FIELDS) for e in access.acls_list(cluster))


def _quotas(cluster: str) -> dict[str, QuotaSpec]:
    found = {}
    for q in access.client_quotas_list(cluster):
        spec = QuotaSpec(user=DEFAULT if q.user_is_default else q.user,
                         client_id=DEFAULT if q.client_id_is_default else q.client_id,
                         values=dict(sorted(q.values.items())))
        found[spec.key] = spec
    return found


def _scram(cluster: str) -> dict[str, ScramSpec]:
    return {u.name: ScramSpec(mechanisms=tuple(sorted(c.mechanism for c in u.credentials)))
            for u in access.scram_users_list(cluster)}


def _policies(cluster: str) -> dict[str, dict]:
    return {row.name: {**{key: getattr(row, key) for key in POLICY_FIELDS},
                       "config_rules": [ConfigRule(**rule).text for rule in row.config_rules]}
            for row in policy_rows(cluster)}


def _masking(cluster: str) -> tuple[MaskSpec, ...]:
    return tuple(MaskSpec(topic_pattern=r.topic_pattern, selector=r.selector, target=r.target, action=r.action,
                          replacement=r.replacement, keep_last=r.keep_last, roles=tuple(sorted(r.roles)), id=r.pk)
                 for r in mask_rule_list(cluster))


def _connectors(cluster: str) -> dict[str, dict[str, dict[str, str]]]:
    found = {}
    for registration in connect_clusters(cluster):
        client = connect_client(registration)
        found[registration.name] = {}
        for name, entry in sorted(client.connectors_rest().items()):
            config = dict((entry.get("info") or {}).get("config") or {})
            config.pop("name", None)  # Connect adds the connector's name to its configuration
            secrets = declared_secrets(client, config.get("connector.class", ""))
            found[registration.name][name] = dict(sorted(mask_config(config, secrets).items()))
    return found


READERS = {"topics": _topics, "acls": _acls, "quotas": _quotas, "scram_users": _scram, "topic_policies": _policies,
           "masking_rules": _masking, "connectors": _connectors}


def cluster_config(cluster: str, sections: tuple[str, ...] = SECTIONS) -> ClusterConfig:
    """The cluster's configuration now, for the sections asked (the others None: not read)."""
    return ClusterConfig(cluster=cluster, **{name: READERS[name](cluster) for name in sections})


def desired_config(text: str) -> ClusterConfig:
    """The file, read (a DocumentError becomes the console's error) with its topic policies' config rules written
    as the console writes them, so that a rule typed with other spaces compares equal."""
    try:
        desired = parse_document(text)
        if desired.topic_policies is None:
            return desired
        policies = {}
        for name, values in desired.topic_policies.items():
            try:
                rules = [parse_config_rule(rule).text for rule in values["config_rules"]]
            except PolicyInputError as exc:
                raise DocumentError(f"topic_policies.{name}.config_rules: {exc.message}") from exc
            policies[name] = {**values, **{k: v.strip() for k, v in values.items() if isinstance(v, str)},
                              "config_rules": rules}
        return replace(desired, topic_policies=policies)
    except DocumentError as exc:
        raise ConsoleError(exc.message, field="file") from exc


def plan_for(cluster: str, text: str, *, allow_deletes: bool) -> Plan:
    """The file planned against the cluster now: the sections it names are read, and only those."""
    desired = desired_config(text)
    return config_plan(desired, cluster_config(cluster, desired.sections), text=text, cluster=cluster,
                       allow_deletes=allow_deletes, reserved_topic=settings.AUDIT_WITNESS_TOPIC)


@dataclass(frozen=True)
class Drift:
    applied: AppliedConfig | None
    plan: Plan | None  # the newest applied file against the cluster now, deletes included
    problem: str = ""  # why the file could not be planned now (the format changed, a section cannot be read)


def config_drift(cluster: str) -> Drift:
    applied = AppliedConfig.objects.filter(cluster=cluster).first()
    if applied is None:
        return Drift(None, None)
    return Drift(applied, plan_for(cluster, applied.text, allow_deletes=True))


def applied_configs(cluster: str, limit: int = 20) -> list[AppliedConfig]:
    return list(AppliedConfig.objects.filter(cluster=cluster)[:limit])
