"""Writes of records: produce one, or copy one to another topic (the poison-message workflow). Audited with the
partition and offset Kafka wrote; the record's bytes are described (size, schema), not stored in the audit log."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from console.audit.actor import Actor
from console.audit.services import audit_refusal, audited
from console.witness.guard import witness_topic_guard
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError, PermissionRefused
from gateway.kafka.types import ProducedRecord, SchemaInfo
from masking.apply import MSG_MASKED_COPY
from masking.selectors import masker_for
from records.selectors import record_at

MSG_NEGATIVE_PARTITION = "A partition number is 0 or more."


@dataclass(frozen=True)
class Payload:
    """One side of a record to write: raw text (None for a null), or JSON to encode with a registry subject."""

    text: str | None
    subject: str = ""
    version: int | None = None


MSG_NO_PARTITION = "Topic '{topic}' has no partition {partition} (it has {count})."


def _check_partition(admin, topic: str, partition: int | None) -> None:
    """The topic must exist (a producer would let the broker create a mistyped one) and have the partition asked
    for (a producer would wait for it until its timeout)."""
    described = admin.describe_topics([topic])[topic]
    if partition is not None and partition >= described.partition_count:
        raise ConsoleError(MSG_NO_PARTITION.format(topic=topic, partition=partition,
                                                   count=described.partition_count))


def _encode(admin, topic: str, payload: Payload, *, is_key: bool) -> tuple[bytes | None, SchemaInfo | None]:
    if payload.text is None:
        return None, None
    if not payload.subject:
        return payload.text.encode("utf-8"), None
    return admin.registry_encode(topic, payload.text, subject=payload.subject, version=payload.version, is_key=is_key)


def _describe(data: bytes | None, schema: SchemaInfo | None) -> dict:
    described: dict = {"bytes": None if data is None else len(data)}
    if data is not None:
        described["sha256"] = hashlib.sha256(data).hexdigest()[:16]
    if schema is not None:
        described["schema"] = {"subject": schema.subject, "version": schema.version, "id": schema.schema_id}
    return described


def record_produce(*, actor: Actor, cluster: str, topic: str, key: Payload, value: Payload,
                   headers: list[tuple[str, str]] | None = None, partition: int | None = None,
                   reason: str = "") -> ProducedRecord:
    """Sends one record. The key and value are encoded before the audit intent, so a record that does not fit its
    schema is refused with the registry's reason and nothing is written or audited as attempted. The audit
    witness topic is refused (an audited refusal)."""
    if partition is not None and partition < 0:
        raise ConsoleError(MSG_NEGATIVE_PARTITION)
    witness_topic_guard(actor=actor, action="record.produce", cluster=cluster, topic=topic, what="produce to",
                        reason=reason, params={"partition": partition})
    admin = cluster_admin(cluster)
    _check_partition(admin, topic, partition)
    key_bytes, key_schema = _encode(admin, topic, key, is_key=True)
    value_bytes, value_schema = _encode(admin, topic, value, is_key=False)
    encoded_headers = tuple((name, text.encode("utf-8")) for name, text in headers or ())
    params = {"partition": partition, "key": _describe(key_bytes, key_schema),
              "value": _describe(value_bytes, value_schema), "headers": [name for name, _ in encoded_headers]}
    with audited(actor=actor, action="record.produce", cluster=cluster, target=f"topic:{topic}", reason=reason,
                 params=params) as record:
        written = admin.produce_record(topic, partition=partition, key=key_bytes, value=value_bytes,
                                       headers=encoded_headers)
        record.after = {"partition": written.partition, "offset": written.offset}
    return written


def record_copy(*, actor: Actor, cluster: str, topic: str, partition: int, offset: int, target_topic: str,
                target_cluster: str = "", target_partition: int | None = None, reason: str = "") -> ProducedRecord:
    """Copies one record, byte for byte (key, value, headers; schema ids stay valid on a cluster sharing the
    registry), to another topic; the partition follows the key unless one is given."""
    target_cluster = target_cluster or cluster
    if masker_for(cluster, topic, actor.user):
        message = MSG_MASKED_COPY.format(topic=topic)
        audit_refusal(actor=actor, action="record.copy", cluster=target_cluster, target=f"topic:{target_topic}",
                      reason=reason, params={"source": {"cluster": cluster, "topic": topic, "partition": partition,
                                                        "offset": offset}, "masked": True}, error=message)
        raise PermissionRefused(message)
    witness_topic_guard(actor=actor, action="record.copy", cluster=target_cluster, topic=target_topic,
                        what="copy records to", reason=reason,
                        params={"source": {"cluster": cluster, "topic": topic, "partition": partition, "offset": offset}})
    source = record_at(cluster, topic, partition, offset)
    target = cluster_admin(target_cluster)
    _check_partition(target, target_topic, target_partition)
    params = {"source": {"cluster": cluster, "topic": topic, "partition": partition, "offset": offset},
              "partition": target_partition, "key": _describe(source.key, None),
              "value": _describe(source.value, None), "headers": [name for name, _ in source.headers]}
    with audited(actor=actor, action="record.copy", cluster=target_cluster, target=f"topic:{target_topic}",
                 reason=reason, params=params) as record:
        written = target.produce_record(target_topic, partition=target_partition, key=source.key,
                                        value=source.value, headers=tuple(source.headers))
        record.after = {"partition": written.partition, "offset": written.offset}
    return written
