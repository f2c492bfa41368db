"""Aborting a hanging transaction: previewed, refused unless it really hangs, confirmed by typing the producer id,
and audited with the partition's state before and after."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from console.audit.guarded import MSG_REASON
from console.audit.actor import Actor
from console.audit.services import audit_refusal, audited
from console.clusters.selectors import cluster_admin
from console.errors import Conflict, ConsoleError
from gateway.kafka.types import PartitionRef, ProducerState
from transactions.selectors import DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN, find_hanging, now_ms, stable_offsets

ACTION = "transaction.abort"
MSG_NO_SUCH_TRANSACTION = "No open transaction starts at offset {offset} of partition {topic}-{partition}."
MSG_NOT_HANGING = ("The transaction of producer {producer} on {topic}-{partition} is not hanging: {why}. Its "
                   "coordinator will end it; aborting it here could break a producer that is still writing.")
MSG_WHY_YOUNG = "its last write is {minutes:.1f} min old, within the {limit} min a transaction may stay open"
MSG_WHY_KNOWN = "its coordinator still tracks it for this partition"
MSG_CONFIRM = "Type the producer id ({producer}) to confirm the abort."


@dataclass(frozen=True)
class AbortPreview:
    ref: PartitionRef
    producer: ProducerState
    last_stable: int
    log_end: int
    open_for_ms: int  # since the producer's last write, as Kafka's tool measures it

    @property
    def start_offset(self) -> int:
        return self.producer.transaction_start_offset

    @property
    def waiting_records(self) -> int:
        """Offsets a read_committed reader of the partition cannot pass until the transaction ends."""
        return max(0, self.log_end - self.last_stable)

    def as_json(self) -> dict:
        return {"topic": self.ref.topic, "partition": self.ref.partition, "producer": asdict(self.producer),
                "last_stable_offset": self.last_stable, "log_end_offset": self.log_end,
                "waiting_records": self.waiting_records, "open_for_ms": self.open_for_ms}


def _open_transaction(cluster: str, ref: PartitionRef, start_offset: int) -> ProducerState:
    producers = cluster_admin(cluster).describe_producers([ref]).get(ref, ())
    for producer in producers:
        if producer.transaction_start_offset == start_offset:
            return producer
    raise ConsoleError(MSG_NO_SUCH_TRANSACTION.format(offset=start_offset, topic=ref.topic, partition=ref.partition))


def transaction_abort_preview(*, cluster: str, topic: str, partition: int, start_offset: int,
                              max_timeout_minutes: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN) -> AbortPreview:
    """What an abort would end; raises Conflict (with the reason) when the transaction is not hanging."""
    ref = PartitionRef(topic, partition)
    producer = _open_transaction(cluster, ref, start_offset)
    at = now_ms()
    hanging = find_hanging(cluster, topic=topic, partition=partition, max_timeout_minutes=max_timeout_minutes, at_ms=at)
    if not any(h.producer.producer_id == producer.producer_id for h in hanging):
        age_min = (at - producer.last_timestamp) / 60_000
        why = (MSG_WHY_YOUNG.format(minutes=age_min, limit=max_timeout_minutes)
               if at - producer.last_timestamp <= max_timeout_minutes * 60_000 else MSG_WHY_KNOWN)
        raise Conflict(MSG_NOT_HANGING.format(producer=producer.producer_id, topic=topic, partition=partition,
                                              why=why))
    offsets = stable_offsets(cluster, [ref])[ref]
    return AbortPreview(ref=ref, producer=producer, last_stable=offsets.last_stable, log_end=offsets.log_end,
                        open_for_ms=at - producer.last_timestamp)


def transaction_abort(*, actor: Actor, cluster: str, topic: str, partition: int, start_offset: int, confirm: str,
                      reason: str, max_timeout_minutes: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN) -> dict:
    """Writes the abort marker for a hanging transaction; returns the partition's state afterwards."""
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    params = {"partition": partition, "start_offset": start_offset, "max_transaction_timeout_min": max_timeout_minutes}
    target = f"topic:{topic}"
    try:
        preview = transaction_abort_preview(cluster=cluster, topic=topic, partition=partition,
                                            start_offset=start_offset, max_timeout_minutes=max_timeout_minutes)
    except Conflict as exc:
        audit_refusal(actor=actor, action=ACTION, cluster=cluster, target=target, reason=reason, params=params,
                      error=exc.message)
        raise
    producer = preview.producer
    if confirm.strip() != str(producer.producer_id):
        raise ConsoleError(MSG_CONFIRM.format(producer=producer.producer_id))
    params.update(producer_id=producer.producer_id, producer_epoch=producer.producer_epoch,
                  coordinator_epoch=producer.coordinator_epoch)
    admin = cluster_admin(cluster)
    with audited(actor=actor, action=ACTION, cluster=cluster, target=target, reason=reason, params=params,
                 before=preview.as_json()) as record:
        admin.abort_transaction(preview.ref, producer_id=producer.producer_id,
                                producer_epoch=producer.producer_epoch, coordinator_epoch=producer.coordinator_epoch)
        after = stable_offsets(cluster, [preview.ref])[preview.ref]
        still_open = [asdict(p) for p in admin.describe_producers([preview.ref]).get(preview.ref, ())
                      if p.transaction_start_offset is not None]
        record.after = {"last_stable_offset": after.last_stable, "log_end_offset": after.log_end,
                        "open_transactions": still_open}
    return record.after
