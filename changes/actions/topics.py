"""The topic changes a request can hold: delete a topic, purge its records (DeleteRecords), change its configs."""

from __future__ import annotations

from changes.registry import ChangeAction, Plan, fingerprint_of
from console.accounts.roles import Role
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.types import TOPIC
from topics import services as topic_services
from topics.diffing import check_config_request
from topics.serializers import purge_rows_json

DELETE, PURGE, CONFIG = "topic.delete", "topic.records.purge", "topic.config.alter"


def _delete_plan(cluster: str, kwargs: dict) -> Plan:
    described = cluster_admin(cluster).describe_topics([kwargs["topic"]])[kwargs["topic"]]
    facts = {"topic": kwargs["topic"], "topic_id": described.topic_id, "partitions": described.partition_count,
             "replication_factor": described.replication_factor}
    # The topic's id: a topic deleted and made again under the same name is another topic.
    return Plan(summary=facts, fingerprint=fingerprint_of(facts))


def _delete_run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    topic_services.topic_delete(actor=actor, cluster=cluster, topic=kwargs["topic"], confirm=kwargs["topic"],
                                reason=reason)
    return {"topic": kwargs["topic"], "deleted": True}


def purge_kwargs(*, topic: str, partitions: list[int] | None, before: int | None) -> dict:
    return {"topic": topic, "partitions": partitions or None, "before": before}


def _purge_plan(cluster: str, kwargs: dict) -> Plan:
    rows = [r for r in topic_services.topic_purge_preview(cluster=cluster, topic=kwargs["topic"],
                                                          partitions=kwargs["partitions"], before=kwargs["before"])
            if r.records_deleted > 0]
    if not rows:
        raise ConsoleError(topic_services.MSG_NOTHING_TO_PURGE)
    shown = purge_rows_json(rows)
    # Where each partition's log starts and where the purge would cut it: records written since (a purge of
    # "everything present") or removed by retention make another plan.
    return Plan(summary={"topic": kwargs["topic"], "partitions": shown},
                fingerprint=fingerprint_of([[r.partition, r.log_start, r.target] for r in rows]))


def _purge_run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    rows = topic_services.topic_records_purge(actor=actor, cluster=cluster, topic=kwargs["topic"],
                                              partitions=kwargs["partitions"], before=kwargs["before"], reason=reason)
    return purge_rows_json(rows)


def config_kwargs(*, topic: str, set_values: dict[str, str], delete: list[str], policy_override: bool = False) -> dict:
    return {"topic": topic, "set": dict(set_values), "delete": list(delete), "policy_override": policy_override}


def _config_plan(cluster: str, kwargs: dict) -> Plan:
    check_config_request(kwargs["set"], kwargs["delete"])
    admin = cluster_admin(cluster)
    admin.alter_configs(TOPIC, kwargs["topic"], set_values=kwargs["set"], delete=kwargs["delete"],
                        validate_only=True)  # a value the broker refuses is refused now, not at approval
    keys = sorted(set(kwargs["set"]) | set(kwargs["delete"]))
    current = admin.describe_configs(TOPIC, [kwargs["topic"]])[kwargs["topic"]]
    rows = [{"key": k, "before": current[k].value if k in current else None,
             "source": current[k].source if k in current else None,
             "after": kwargs["set"].get(k), "removed": k in kwargs["delete"]} for k in keys]
    return Plan(summary={"topic": kwargs["topic"], "configs": rows},
                fingerprint=fingerprint_of([[r["key"], r["before"], r["source"], r["after"], r["removed"]]
                                            for r in rows]))


def _config_run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    return topic_services.topic_configs_alter(actor=actor, cluster=cluster, topic=kwargs["topic"],
                                              set_values=kwargs["set"], delete=kwargs["delete"], reason=reason,
                                              policy_override=kwargs.get("policy_override", False))


def _topic(kwargs: dict) -> str:
    return f"topic:{kwargs['topic']}"


ACTIONS = (
    ChangeAction(DELETE, "topic deletion", Role.ADMIN, _topic, _delete_plan, _delete_run),
    ChangeAction(PURGE, "purge of records", Role.ADMIN, _topic, _purge_plan, _purge_run),
    ChangeAction(CONFIG, "topic config change", Role.ADMIN, _topic, _config_plan, _config_run),
)
