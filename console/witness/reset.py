"""Clearing the witness alarm (console.witness.loss): an admin accepts, audited, that the topic lost a range.

What is safe to accept, and so all a reset does:
- only the range the alarm names, typed out, so nobody accepts a later, larger loss they have not seen;
- the lost events are not published again from the database: the database is what the witness guards against,
  and publishing its rows anew would vouch for whatever was changed or removed while the topic could not tell;
- publishing resumes after the high-water mark, chained to its hash, so the topic never starts again from #1 and
  a row after the mark that does not continue the chain is still refused;
- events up to the mark that the topic no longer holds are checked by the hash chain alone from then on;
- the reset is itself an audit event, so the next record the topic receives says who accepted what, and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from console.audit.actor import Actor
from console.audit.models import AuditEvent, WitnessState
from console.audit.services import audited
from console.witness.config import witness_config
from console.errors import ConsoleError

MSG_NO_WITNESS = "No audit witness is configured: there is no alarm to clear."
MSG_NO_ALARM = "The audit witness has no alarm raised: nothing to reset."
MSG_REASON = "A reason is required: it goes into the audit log, and the witness topic."
MSG_ACCEPT_MISMATCH = ("The alarm is about {seqs}: type exactly that range to accept it ('{given}' does not "
                       "match).")


@dataclass(frozen=True)
class ResetOutcome:
    first_seq: int
    last_seq: int
    lost_reason: str
    held_in_database: int  # of the lost range, rows the database still has (checked by the chain alone now)
    resume_after: int

    @property
    def seqs(self) -> str:
        return _seqs(self.first_seq, self.last_seq)


def _seqs(first: int, last: int) -> str:
    return f"#{first}" if first == last else f"#{first}-#{last}"


def witness_alarm_reset(*, actor: Actor, accept: str, reason: str) -> ResetOutcome:
    """Clears the witness alarm after the caller typed the lost range (`accept`, as `#A-#B` or `#A`): the range
    becomes accepted as no longer witnessed, the high-water mark stays, the topic's id and offset are forgotten
    (noted afresh from the topic as it is now). Audited as audit.witness.reset."""
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    config = witness_config()
    if config is None:
        raise ConsoleError(MSG_NO_WITNESS)
    state = WitnessState.objects.filter(cluster=config.cluster, topic=config.topic).first()
    if state is None or not state.lost:
        raise ConsoleError(MSG_NO_ALARM)
    seqs = _seqs(state.lost_first_seq, state.lost_last_seq)
    if accept.replace(" ", "") != seqs:
        raise ConsoleError(MSG_ACCEPT_MISMATCH.format(seqs=seqs, given=accept))
    outcome = ResetOutcome(
        first_seq=state.lost_first_seq, last_seq=state.lost_last_seq, lost_reason=state.lost_reason,
        held_in_database=AuditEvent.objects.filter(seq__gte=state.lost_first_seq,
                                                   seq__lte=state.lost_last_seq).count(),
        resume_after=state.high_seq)
    before = {"lost": [state.lost_first_seq, state.lost_last_seq], "lost_reason": state.lost_reason,
              "lost_at": state.lost_at, "high_seq": state.high_seq, "high_offset": state.high_offset,
              "topic_id": state.topic_id, "accepted_through": state.accepted_through}
    with audited(actor=actor, action="audit.witness.reset", cluster=config.cluster, target=f"topic:{config.topic}",
                 reason=reason, params={"accepted": [outcome.first_seq, outcome.last_seq],
                                        "held_in_database": outcome.held_in_database}, before=before) as record:
        # Conditional on the alarm being the one the caller saw.
        updated = WitnessState.objects.filter(pk=state.pk, lost_at=state.lost_at).update(
            lost_at=None, lost_first_seq=None, lost_last_seq=None, lost_reason="",
            accepted_through=max(state.accepted_through, state.high_seq), high_offset=None, topic_id="")
        if not updated:
            raise ConsoleError(MSG_NO_ALARM)
        record.after = {"accepted_through": max(state.accepted_through, state.high_seq), "resume_after": state.high_seq}
    return outcome
