"""Pure planning of bulk topic actions: from the topics as Kafka describes them now (and the policies' verdicts),
the change each topic would get or why it is left alone. No Django, no Kafka client."""

from __future__ import annotations

from dataclasses import dataclass

from console.bulk import confirmation_phrase
from gateway.kafka.types import ConfigEntryInfo, TopicMetadata

DELETE, CONFIG, PARTITIONS = "delete", "config", "partitions"
ACTIONS = (DELETE, CONFIG, PARTITIONS)
VERBS = {DELETE: "delete", CONFIG: "reconfigure", PARTITIONS: "repartition"}
AUDIT_ACTIONS = {DELETE: "topic.delete", CONFIG: "topic.config.alter", PARTITIONS: "topic.partitions.add"}

MSG_MISSING = "does not exist (deleted by another client?)"
MSG_INTERNAL = "is one of Kafka's internal topics"
MSG_WITNESS = "is the audit witness topic"
MSG_NOT_MORE = "already has {current} partitions (Kafka cannot shrink a topic)"
MSG_NO_CHANGE = "already has these configs"
MSG_UNKNOWN_ACTION = "Unknown bulk action {action!r}: choose delete, config or partitions."


@dataclass(frozen=True)
class TopicChange:
    topic: str
    before: dict | None
    after: dict | None
    refused: str = ""  # why this topic is left alone
    policy: tuple[str, ...] = ()  # the rules it would break (an admin's override lets it through)

    @property
    def summary(self) -> str:
        if self.before is None:
            return "–"
        if self.after is None:
            return f"delete ({self.before['partitions']} partitions, replication factor " \
                   f"{self.before['replication_factor']})"
        if "partitions" in self.after:
            return f"partitions {self.before['partitions']} → {self.after['partitions']}"
        return "; ".join(f"{key}: {_shown(self.before.get(key))} → {_shown(value)}"
                         for key, value in self.after.items())


def _shown(entry) -> str:
    if entry is None:
        return "(broker default)"
    return f"{entry['value']} ({entry['source']})" if isinstance(entry, dict) else str(entry)


@dataclass(frozen=True)
class TopicBulkPlan:
    action: str
    changes: tuple[TopicChange, ...]

    @property
    def to_change(self) -> list[TopicChange]:
        return [c for c in self.changes if not c.refused]

    @property
    def left_alone(self) -> list[TopicChange]:
        return [c for c in self.changes if c.refused]

    @property
    def phrase(self) -> str:
        return confirmation_phrase(VERBS[self.action], len(self.to_change), "topic")


def _guard(name: str, described: dict[str, TopicMetadata], witness: str | None) -> str:
    if name not in described:
        return MSG_MISSING
    if described[name].is_internal:
        return MSG_INTERNAL
    if name == witness:
        return MSG_WITNESS
    return ""


def _shape(meta: TopicMetadata) -> dict:
    return {"partitions": meta.partition_count, "replication_factor": meta.replication_factor,
            "topic_id": meta.topic_id}


def plan_delete(names: list[str], described: dict[str, TopicMetadata], *, witness: str | None = None
                ) -> TopicBulkPlan:
    changes = []
    for name in names:
        refused = _guard(name, described, witness)
        changes.append(TopicChange(name, None if refused == MSG_MISSING else _shape(described[name]), None, refused))
    return TopicBulkPlan(DELETE, tuple(changes))


def plan_partitions(names: list[str], described: dict[str, TopicMetadata], new_total: int, *,
                    violations: dict[str, list[str]], refusals: dict[str, str], override: bool,
                    witness: str | None = None) -> TopicBulkPlan:
    """`violations`: topic -> the policy rules it would break; `refusals`: topic -> the broker's refusal of a
    validate-only request."""
    changes = []
    for name in names:
        refused = _guard(name, described, witness)
        before = None if refused == MSG_MISSING else {"partitions": described[name].partition_count}
        if not refused and described[name].partition_count >= new_total:
            refused = MSG_NOT_MORE.format(current=described[name].partition_count)
        broken = tuple(violations.get(name, ()))
        if not refused:
            refused = refusals.get(name, "") or ("" if override or not broken else "; ".join(broken))
        changes.append(TopicChange(name, before, {"partitions": new_total}, refused, broken))
    return TopicBulkPlan(PARTITIONS, tuple(changes))


def plan_configs(names: list[str], described: dict[str, TopicMetadata], current: dict[str, dict[str, ConfigEntryInfo]],
                 *, set_values: dict[str, str], delete: list[str], violations: dict[str, list[str]],
                 refusals: dict[str, str], override: bool, witness: str | None = None) -> TopicBulkPlan:
    """Each topic's keys before and after; a topic whose overrides already are what is asked is left alone."""
    changes = []
    keys = sorted(set(set_values) | set(delete))
    for name in names:
        refused = _guard(name, described, witness)
        if refused == "" and name not in current:
            refused = MSG_MISSING
        entries = current.get(name, {})
        before = {k: ({"value": entries[k].value, "source": entries[k].source} if k in entries else None)
                  for k in keys}
        after = {k: {"value": set_values[k], "source": "topic"} for k in set_values}
        after.update({k: None for k in delete})
        unchanged = all((entries.get(k) is not None and entries[k].source == "topic" and entries[k].value == v)
                        for k, v in set_values.items()) and all(
            k not in entries or entries[k].source != "topic" for k in delete)
        broken = tuple(violations.get(name, ()))
        if not refused and unchanged:
            refused = MSG_NO_CHANGE
        if not refused:
            refused = refusals.get(name, "") or ("" if override or not broken else "; ".join(broken))
        changes.append(TopicChange(name, before if name in current else None, after, refused, broken))
    return TopicBulkPlan(CONFIG, tuple(changes))
