"""Publishing the audit log to its witness topic.

The database write comes first and means what it always did (audit_record commits the row; a Kafka change waits
for its intent row). Publishing follows, in rounds: each round asks the topic for its last committed record (the
only record of how far publishing got, so a publisher killed between writing and noting it neither loses nor
repeats a batch), takes the rows after it in seq order, checks that each continues the chain, and appends them in
one transaction that commits only if the topic still ends with that record (gateway.kafka.records_io.ops_append). Kafka
down: the round records why and the next one tries again; nothing waits on it but the publisher. The database
keeps only a high-water mark beside it (console.witness.loss), so a topic that later holds less is an alarm,
not a reason to start again from #1.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from console.audit.actor import Actor
from console.audit.chain import GENESIS_HASH, event_hash
from console.audit.models import AuditEvent, WitnessState
from console.audit.services import audited
from console.witness.config import WitnessConfig, witness_config
from console.witness.hanging import witness_hanging_abort
from console.witness.loss import (
    expiry_could_explain, find_loss, high_lower_after_abort, high_note, loss_raise, lost_message, topic_id_note,
    topic_view,
)
from console.witness.records import NotAWitnessRecord, event_record, record_link
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError, TopicAlreadyExists
from gateway.kafka.types import RecordInfo

log = logging.getLogger(__name__)

MAX_ROUNDS = 20  # batches per run; the next run carries on
MSG_GAP = "event #{seq} is missing from the database: the next row is #{found}"
MSG_LINK = "event #{seq} does not link to the hash of #{prev} as published"
MSG_HASH = "event #{seq}: hash does not match its content (altered or forged)"
MSG_FOREIGN_TAIL = "the witness topic's last record is not an audit event of this console ({detail})"
MSG_MOVED_BACK = "the witness topic moved back to #{seq} while publishing (it held #{high})"


@dataclass(frozen=True)
class PublishResult:
    published: int = 0  # rows this run appended
    up_to: int = 0  # the topic's last seq afterwards
    error: str = ""
    blocked_seq: int | None = None


@dataclass(frozen=True)
class Blocked:
    """The first row that does not continue the chain, and why."""

    seq: int
    reason: str


def _break_in(event: AuditEvent, prev_seq: int, prev_hash: str) -> str:
    if event.seq != prev_seq + 1:
        return MSG_GAP.format(seq=prev_seq + 1, found=event.seq)
    if event.prev_hash != prev_hash:
        return MSG_LINK.format(seq=event.seq, prev=prev_seq)
    if event.hash != event_hash(event):
        return MSG_HASH.format(seq=event.seq)
    return ""


def next_batch(after_seq: int, after_hash: str, size: int) -> tuple[list[AuditEvent], Blocked | None]:
    """The rows after `after_seq` that continue the chain from it, up to the first that does not."""
    batch: list[AuditEvent] = []
    prev_seq, prev_hash = after_seq, after_hash
    for event in AuditEvent.objects.filter(seq__gt=after_seq).order_by("seq")[:size]:
        reason = _break_in(event, prev_seq, prev_hash)
        if reason:
            return batch, Blocked(event.seq, reason)
        batch.append(event)
        prev_seq, prev_hash = event.seq, event.hash
    return batch, None


def _position(last: RecordInfo | None) -> tuple[int, str]:
    """The seq and hash the topic ends with. Someone else writing to the topic stops publishing: appending after
    a record of theirs would chain genuine events to it."""
    if last is None:
        return 0, GENESIS_HASH
    try:
        link = record_link(last)
    except NotAWitnessRecord as exc:
        raise ConsoleError(MSG_FOREIGN_TAIL.format(detail=exc)) from exc
    if not link.hash_ok:
        raise ConsoleError(MSG_FOREIGN_TAIL.format(detail=f"offset {last.offset}: its hash is not valid"))
    return link.seq, link.hash


def witness_topic_create(*, actor: Actor, config: WitnessConfig, gateway) -> None:
    """Creates the witness topic: one partition (a total order), cleanup.policy=delete with the configured
    retention (forever by default), replicated on up to three brokers. Another publisher creating it first is
    fine."""
    brokers = gateway.describe_cluster().broker_count
    replication = min(3, brokers)
    configs = {"cleanup.policy": "delete", "retention.ms": str(config.retention_ms), "retention.bytes": "-1"}
    if replication >= 3:
        configs["min.insync.replicas"] = "2"  # an acknowledged batch survives the loss of one broker
    with audited(actor=actor, action="audit.witness.create", cluster=config.cluster, target=f"topic:{config.topic}",
                 reason="the audit witness topic did not exist",
                 params={"partitions": 1, "replication_factor": replication, "configs": configs}):
        try:
            gateway.create_topic(config.topic, partitions=1, replication_factor=replication, configs=configs)
        except TopicAlreadyExists:
            pass


def _note(state: WitnessState, last: RecordInfo | None) -> None:
    if last is not None:
        seq, link_hash = _position(last)
        high_note(state, seq=seq, hash=link_hash, offset=last.offset)


def witness_publish(*, actor: Actor) -> PublishResult:
    """One publishing run: up to MAX_ROUNDS batches of AUDIT_WITNESS_BATCH events, each appended in one
    transaction after the topic's last record. The rows themselves are not audited (they are the audit log);
    creating the topic is. Stores the outcome in WitnessState.

    A topic that holds less than the high-water mark (console.witness.loss) raises the alarm and nothing
    is published, now or in later runs, until audit_witness_reset: the topic is never filled again from #1.
    A topic whose records all expired by retention is carried on from the high-water mark."""
    config = witness_config()
    if config is None:
        return PublishResult()
    state, _ = WitnessState.objects.get_or_create(cluster=config.cluster, topic=config.topic)
    state.attempted_at = timezone.now()
    published, error, blocked = 0, "", None
    try:
        if state.lost:
            raise ConsoleError(lost_message(state))
        gateway = cluster_admin(config.cluster)
        tail, view = topic_view(gateway, config.topic)
        loss = find_loss(state, view, expiry_explains=lambda: expiry_could_explain(gateway, config.topic, state))
        if loss is not None:
            loss_raise(state, loss)
            raise ConsoleError(lost_message(state))
        if tail is None:
            witness_topic_create(actor=actor, config=config, gateway=gateway)
            try:  # its id from the start, so a later re-creation is told from a broker that restarts
                topic_id_note(state, gateway.describe_topics([config.topic])[config.topic].topic_id)
            except KafkaGatewayError:
                pass  # not known to the broker asked yet: the next run notes it
            # Empty, as far as this publisher knows (its partition may have no leader to ask yet); if another one
            # created it and wrote first, the conditional append finds that out.
            last = None
        else:
            topic_id_note(state, view.topic_id)
            last = tail.last
            _note(state, last)
        for _ in range(MAX_ROUNDS):
            seq, prev_hash = _position(last)
            if seq < state.high_seq:
                if last is not None:  # moved back between two reads: the next run's check names the loss
                    raise ConsoleError(MSG_MOVED_BACK.format(seq=seq, high=state.high_seq))
                # Every record expired (checked above), or a reset accepted the loss: carry on after the mark,
                # chained to its hash, never from #1.
                seq, prev_hash = state.high_seq, state.high_hash
            state.published_seq = seq
            batch, blocked = next_batch(seq, prev_hash, settings.AUDIT_WITNESS_BATCH)
            if not batch:
                break
            result = gateway.append_if_last(config.topic, transactional_id=config.transactional_id,
                                            expected_last_key=last.key if last is not None else None,
                                            records=tuple(event_record(e) for e in batch))
            last = result.last
            if result.held_at is not None:
                witness_hanging_abort(actor=actor, config=config, gateway=gateway, held_at=result.held_at)
                tail, _ = topic_view(gateway, config.topic)
                last = tail.last if tail is not None else None
                seq, link_hash = _position(last) if last is not None else (None, "")
                high_lower_after_abort(state, held_at=result.held_at, last_seq=seq, last_hash=link_hash,
                                       last_offset=last.offset if last is not None else None)
                continue
            _note(state, last)
            state.published_seq = _position(last)[0] if last is not None else state.high_seq
            if not result.appended:
                continue  # another publisher moved the topic on: carry on from where it ends now
            published += len(batch)
            state.published_at = timezone.now()
            if blocked is not None:
                break
    except (KafkaGatewayError, ConsoleError) as exc:
        error = exc.message
        log.warning("Audit witness: publishing to %s on cluster '%s' failed: %s", config.topic, config.cluster, error)
    state.error = error
    state.blocked_seq, state.blocked_reason = (blocked.seq if blocked else None, blocked.reason if blocked else "")
    if blocked is not None:
        log.error("Audit witness: publishing stopped at event #%s: %s", blocked.seq, blocked.reason)
    # Only the fields of this run: the high-water mark and the alarm are updated on their own, conditionally.
    state.save(update_fields=["attempted_at", "published_seq", "published_at", "error", "blocked_seq",
                              "blocked_reason"])
    return PublishResult(published=published, up_to=state.published_seq, error=error,
                         blocked_seq=blocked.seq if blocked else None)
