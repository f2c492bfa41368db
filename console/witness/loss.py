"""The witness topic holding less than was published to it: the high-water mark and the alarm.

The topic alone cannot tell that it lost records: a topic deleted and re-created, or purged to its end, looks
like a new one, and a publisher reading only its tail would publish the whole log again from #1, so rows deleted
from the database meanwhile would never be missed. So the publisher keeps, in WitnessState, the highest seq it
ever saw on the topic, that record's offset and hash, and the topic's id; they only rise. When the topic holds
less, publishing stops and the alarm stays (the audit page, /health, audit_verify) until an admin runs
audit_witness_reset, which is audited and says what it accepts.

Records that expire by the topic's retention are not a loss; a purge (DeleteRecords) under a retention that
cannot have removed them yet is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from console.audit.models import WitnessState
from console.witness.records import NotAWitnessRecord, record_link
from console.errors import ConsoleError
from gateway.kafka.errors import TopicNotFound
from gateway.kafka.types import TOPIC, CommittedTail

log = logging.getLogger(__name__)

MSG_GONE = "the topic no longer exists though it held events up to #{high}"
MSG_RECREATED = "the topic was deleted and re-created (its id was {old}, it is {new})"
MSG_TRUNCATED = "the topic ends at offset {end}, below offset {offset} where it held #{high}"
MSG_LAST_BELOW = "the topic's last record is #{last}, below #{high} which it held before"
MSG_BEHIND = ("the witness topic ends at offset {end}, below offset {offset} where it held #{high}; its broker may "
              "still be recovering: nothing is published until it reaches that offset again")
MSG_EMPTIED = ("the topic holds no record though it held #{high}, and its retention cannot have removed it yet "
               "(records purged)")
MSG_LOST = ("the witness topic lost published records {seqs}: {reason}. Publishing has stopped; "
            "`manage.py audit_witness_reset` clears this alarm")
# Health's reason code: public, so a fixed word and no error text.
REASON_LOST = "witness-topic-lost"


@dataclass(frozen=True)
class Loss:
    first_seq: int
    last_seq: int
    reason: str


@dataclass(frozen=True)
class TopicView:
    """What the topic holds now, as far as the loss check needs it."""

    stable_end: int
    last_seq: int | None  # of its last committed record; None when it holds none
    topic_id: str | None
    open_transaction: bool = False  # its stable end is below its log end


def find_loss(state: WitnessState, topic: TopicView | None, *, expiry_explains: Callable[[], bool]) -> Loss | None:
    """Pure: whether `topic` (None: it does not exist) holds less than `state` saw on it. `expiry_explains` is
    asked only when the topic is empty though records were seen on it: can retention have removed them all?
    Raises ConsoleError (MSG_BEHIND) while the same topic reads shorter than before, which a restarting broker
    shows for a moment."""
    if state.high_offset is None:
        return None  # nothing seen on this topic since the last reset (or ever)
    base, high = state.accepted_through + 1, state.high_seq
    if topic is None:
        return Loss(base, high, MSG_GONE.format(high=high))
    if state.topic_id and topic.topic_id and topic.topic_id != state.topic_id:
        return Loss(base, high, MSG_RECREATED.format(old=state.topic_id, new=topic.topic_id))
    if topic.stable_end <= state.high_offset and topic.open_transaction:
        # Records up to the mark held back by a transaction whose commit marker a broker crash lost: the
        # publisher aborts it (audited, console.witness.hanging) and lowers the mark to what stays.
        return None
    if topic.stable_end <= state.high_offset and state.topic_id and topic.topic_id == state.topic_id:
        # The same topic cannot get shorter, but its high watermark can read low for a moment after its leader's
        # broker was killed (the checkpoint lags): wait and say so. A purge does not lower the end; a delete
        # changes the id.
        raise ConsoleError(MSG_BEHIND.format(end=topic.stable_end, offset=state.high_offset, high=high))
    if topic.stable_end <= state.high_offset:
        first = topic.last_seq + 1 if topic.last_seq is not None and topic.last_seq < high else base
        return Loss(first, high, MSG_TRUNCATED.format(end=topic.stable_end, offset=state.high_offset, high=high))
    if topic.last_seq is not None and topic.last_seq < high:
        return Loss(topic.last_seq + 1, high, MSG_LAST_BELOW.format(last=topic.last_seq, high=high))
    if topic.last_seq is None and not expiry_explains():
        return Loss(base, high, MSG_EMPTIED.format(high=high))
    return None


def topic_view(gateway, topic: str) -> tuple[CommittedTail | None, TopicView | None]:
    """The topic's committed tail (gateway.kafka.records_io.ops_append) and what find_loss needs; (None, None) when the
    topic does not exist. A last record that is no audit event counts as none here (the caller reports it)."""
    try:
        tail = gateway.last_committed_record(topic)
        topic_id = gateway.describe_topics([topic])[topic].topic_id
    except TopicNotFound:
        return None, None
    last_seq = None
    if tail.last is not None:
        try:
            last_seq = record_link(tail.last).seq
        except NotAWitnessRecord:
            pass
    return tail, TopicView(stable_end=tail.stable_end, last_seq=last_seq, topic_id=topic_id,
                           open_transaction=tail.stable_end < tail.log_end)


def retention_limits(gateway, topic: str) -> tuple[int, int]:
    """The topic's effective retention.ms and retention.bytes (-1: unlimited), from DescribeConfigs."""
    current = gateway.describe_configs(TOPIC, [topic])[topic]

    def value(name: str) -> int:
        entry = current.get(name)
        try:
            return int(entry.value) if entry is not None and entry.value is not None else -1
        except ValueError:
            return -1

    return value("retention.ms"), value("retention.bytes")


def expiry_could_explain(gateway, topic: str, state: WitnessState) -> bool:
    """Whether retention can have removed every record up to the high-water mark: a size limit can at any time;
    a time limit only once the last batch is older than it (its records' timestamps are at most that old)."""
    retention_ms, retention_bytes = retention_limits(gateway, topic)
    if retention_bytes >= 0:
        return True
    if retention_ms < 0 or state.published_at is None:
        return False
    return state.published_at < timezone.now() - timedelta(milliseconds=retention_ms)


def high_note(state: WitnessState, *, seq: int, hash: str, offset: int) -> None:
    """Raises the high-water mark to a record seen on the topic; never lowers it (another publisher may have
    noted a higher one meanwhile: the update is conditional)."""
    if seq < state.high_seq or (seq == state.high_seq and state.high_offset is not None):
        return
    WitnessState.objects.filter(pk=state.pk, high_seq__lte=seq).update(high_seq=seq, high_hash=hash,
                                                                       high_offset=offset)
    state.high_seq, state.high_hash, state.high_offset = seq, hash, offset


def high_lower_after_abort(state: WitnessState, *, held_at: int, last_seq: int | None, last_hash: str,
                           last_offset: int | None) -> None:
    """After the publisher aborted the hanging transaction starting at `held_at` (its own batch, whose commit
    marker was lost), the records from there on are no longer in the topic: the mark goes back to the last
    committed record before them, so they are published again. Only a mark at or past `held_at` moves."""
    if state.high_offset is None or state.high_offset < held_at:
        return
    values = ({"high_seq": last_seq, "high_hash": last_hash, "high_offset": last_offset} if last_seq is not None
              else {"high_seq": state.accepted_through, "high_hash": "", "high_offset": None})
    WitnessState.objects.filter(pk=state.pk, high_offset__gte=held_at).update(**values)
    state.high_seq, state.high_hash, state.high_offset = values["high_seq"], values["high_hash"], values["high_offset"]


def topic_id_note(state: WitnessState, topic_id: str | None) -> None:
    """The first id seen since the last reset; a different one later means the topic was re-created."""
    if topic_id and not state.topic_id:
        WitnessState.objects.filter(pk=state.pk, topic_id="").update(topic_id=topic_id)
        state.topic_id = topic_id


def loss_raise(state: WitnessState, loss: Loss) -> None:
    """Stores the alarm, keeping the first one if it is already raised (its reason is the earliest seen)."""
    WitnessState.objects.filter(pk=state.pk, lost_at__isnull=True).update(
        lost_at=timezone.now(), lost_first_seq=loss.first_seq, lost_last_seq=loss.last_seq, lost_reason=loss.reason)
    state.refresh_from_db(fields=["lost_at", "lost_first_seq", "lost_last_seq", "lost_reason"])
    log.error("Audit witness: %s", lost_message(state))


def lost_message(state: WitnessState) -> str:
    first, last = state.lost_first_seq, state.lost_last_seq
    seqs = f"#{first}" if first == last else f"#{first}-#{last}"
    return MSG_LOST.format(seqs=seqs, reason=state.lost_reason)
