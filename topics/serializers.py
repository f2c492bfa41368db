"""The JSON shapes the shell's `--format json` prints and the API answers, one function each, so both say the same."""

from __future__ import annotations

from dataclasses import asdict

from topics.selectors import TopicDetail


def topic_rows_json(rows) -> list[dict]:
    """`topics list`: the shared topic table's rows."""
    return [asdict(r) for r in rows]


def topic_detail_json(detail: TopicDetail) -> dict:
    """`topics describe`: partitions with offsets, configs with their sources (a sensitive value never shown)."""
    return {"name": detail.name, "topic_id": detail.topic_id, "internal": detail.internal,
            "partitions": [{**asdict(p), "messages": p.messages} for p in detail.partitions],
            "configs": [{"name": c.name, "value": None if c.sensitive else c.value, "source": c.source,
                         "broker_default": c.inherited, "read_only": c.read_only, "sensitive": c.sensitive}
                        for c in detail.configs]}


def purge_rows_json(rows) -> list[dict]:
    return [{**asdict(r), "records_deleted": r.records_deleted} for r in rows]


POLICY_FIELDS = ("applies_to", "name_pattern", "name_message", "min_partitions", "max_partitions",
                 "partitions_message", "min_replication_factor", "max_replication_factor", "replication_message")


def policies_json(rows) -> list[dict]:
    """`topic_policies list`: each policy's rules, config rules as their text."""
    return [{"name": r.name, **{k: getattr(r, k) for k in POLICY_FIELDS}, "config_rules": r.config_rules}
            for r in rows]


def policy_report_json(rows) -> list[dict]:
    return [{"topic": r.topic, "partitions": r.partitions, "replication_factor": r.replication_factor,
             "violations": [v.as_dict() for v in r.violations]} for r in rows]
