"""Reads for topic policies: the cluster's policies, the shapes topics have (or would have after a change), and the
report of the topics that break today's policies, from the shared topic table and one DescribeConfigs round per
thousand topics (never one call per topic)."""

from __future__ import annotations

from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from gateway.kafka.types import TOPIC
from topics.models import TopicPolicy
from topics.policies.rules import ConfigRule, Policy, TopicShape, Violation, evaluate, needed_config_keys
from topics.selectors import topic_inherited_values
from topics.table import TopicRow

CONFIG_BATCH = 1000  # topics per DescribeConfigs request of the report


def policy_from_row(row: TopicPolicy) -> Policy:
    return Policy(
        name=row.name, applies_to=row.applies_to, name_pattern=row.name_pattern, name_message=row.name_message,
        min_partitions=row.min_partitions, max_partitions=row.max_partitions,
        partitions_message=row.partitions_message, min_replication_factor=row.min_replication_factor,
        max_replication_factor=row.max_replication_factor, replication_message=row.replication_message,
        config_rules=tuple(ConfigRule(**rule) for rule in row.config_rules or []))


def policy_rows(cluster: str) -> list[TopicPolicy]:
    return list(TopicPolicy.objects.filter(cluster=cluster).order_by("name"))


def cluster_policies(cluster: str) -> list[Policy]:
    return [policy_from_row(row) for row in policy_rows(cluster)]


def _effective(cluster: str, names: list[str], keys: frozenset[str]) -> dict[str, tuple[dict, frozenset[str]]]:
    """Per topic: the effective values of `keys` and which of them are overridden on the topic, from DescribeConfigs
    in batches; a topic deleted meanwhile is left out."""
    if not keys or not names:
        return {name: ({}, frozenset()) for name in names}
    admin = cluster_admin(cluster)
    found: dict[str, tuple[dict, frozenset[str]]] = {}
    for start in range(0, len(names), CONFIG_BATCH):
        described = admin.describe_configs(TOPIC, names[start:start + CONFIG_BATCH], skip_missing=True)
        for name, entries in described.items():
            values = {key: entries[key].value if key in entries and not entries[key].sensitive else None
                      for key in keys}
            overrides = frozenset(key for key in keys if key in entries and entries[key].source == "topic")
            found[name] = (values, overrides)
    return found


def current_shapes(cluster: str, rows: list[TopicRow], policies: list[Policy]) -> dict[str, TopicShape]:
    """The shape of each row's topic, with the configs the policies name read in batches."""
    keys = needed_config_keys(policies)
    effective = _effective(cluster, [r.name for r in rows], keys)
    return {r.name: TopicShape(name=r.name, partitions=r.partitions, replication_factor=r.replication_factor,
                               configs=effective[r.name][0], overrides=effective[r.name][1])
            for r in rows if r.name in effective}


def config_change_shapes(cluster: str, topics: list[str], *, set_values: dict[str, str], delete: list[str],
                         policies: list[Policy]) -> dict[str, TopicShape]:
    """What each topic's configs would be after setting `set_values` and removing the overrides in `delete` (a
    removed override falls back to the broker's value), for the keys the policies name."""
    keys = needed_config_keys(policies)
    if not keys:
        return {name: TopicShape(name=name) for name in topics}
    effective = _effective(cluster, topics, keys)
    inherited = topic_inherited_values(cluster, sorted(keys & set(delete))) if delete else {}
    shapes = {}
    for name, (values, overrides) in effective.items():
        after = dict(values)
        after.update({k: v for k, v in inherited.items()})
        after.update({k: v for k, v in set_values.items() if k in keys})
        shapes[name] = TopicShape(name=name, configs=after,
                                  overrides=(overrides - set(delete)) | (set(set_values) & keys))
    return shapes


def create_shape(cluster: str, name: str, *, partitions: int, replication_factor: int, configs: dict[str, str],
                 policies: list[Policy]) -> TopicShape:
    """A topic as a create would make it: the configs given, and the broker's values for the others."""
    keys = needed_config_keys(policies)
    missing = sorted(keys - set(configs))
    values = {**(topic_inherited_values(cluster, missing) if missing else {}),
              **{k: v for k, v in configs.items() if k in keys}}
    return TopicShape(name=name, partitions=partitions, replication_factor=replication_factor, configs=values,
                      overrides=frozenset(configs) & keys)


def detail_violations(cluster: str, name: str, *, partitions: int, replication_factor: int, internal: bool,
                      configs: list) -> list[Violation]:
    """The rules a topic breaks, from what its page read already (its configs with their sources): no Kafka call."""
    policies = cluster_policies(cluster)
    if internal or not policies:
        return []
    shape = TopicShape(name=name, partitions=partitions, replication_factor=replication_factor,
                       configs={c.name: None if c.sensitive else c.value for c in configs},
                       overrides=frozenset(c.name for c in configs if c.source == "topic"))
    return evaluate(policies, shape)


@dataclass(frozen=True)
class ReportRow:
    topic: str
    partitions: int
    replication_factor: int
    violations: tuple[Violation, ...]


def policy_report(cluster: str, rows: list[TopicRow], policies: list[Policy] | None = None) -> list[ReportRow]:
    """The topics of `rows` (the shared topic table) that break the cluster's policies; internal topics are
    Kafka's own and left out."""
    policies = cluster_policies(cluster) if policies is None else policies
    if not policies:
        return []
    chosen = [r for r in rows if not r.internal and any(p.applies(r.name) for p in policies)]
    shapes = current_shapes(cluster, chosen, policies)
    report = []
    for row in chosen:
        if row.name not in shapes:
            continue
        found = evaluate(policies, shapes[row.name])
        if found:
            report.append(ReportRow(row.name, row.partitions, row.replication_factor, tuple(found)))
    return report
