"""What the audit page and /health say about the witness, from the database alone (no Kafka call)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone

from console.audit.models import AuditCheck, AuditEvent, WitnessState
from console.witness.config import witness_config
from console.witness.loss import REASON_LOST, lost_message

OFF, OK, LAGGING, BROKEN = "off", "ok", "lagging", "broken"
REASON_REFUSED, REASON_CHECK = "publishing-refused-a-row", "last-check-found-problems"


@dataclass(frozen=True)
class WitnessStatus:
    cluster: str
    topic: str
    state: WitnessState | None  # None until the publisher's first run
    pending: int  # events after the topic's last known record
    oldest_pending_at: datetime | None
    last_check: AuditCheck | None

    @property
    def configured(self) -> bool:
        return bool(self.cluster)

    @property
    def oldest_pending_age_s(self) -> float | None:
        return (timezone.now() - self.oldest_pending_at).total_seconds() if self.oldest_pending_at else None

    @property
    def lagging(self) -> bool:
        age = self.oldest_pending_age_s
        return age is not None and age > settings.AUDIT_WITNESS_LAG_ALERT_S

    @property
    def broken(self) -> bool:
        """The topic lost published records (the alarm stays until audit_witness_reset), the publisher refused a
        row, or the last check found rows changed, missing or inserted. A check that could not read the witness
        says nothing either way."""
        return self.reason is not None

    @property
    def lost(self) -> bool:
        return self.state is not None and self.state.lost

    @property
    def reason(self) -> str | None:
        """Why it is broken, as a fixed word (for /health, which shows no error texts); None when it is not."""
        if self.lost:
            return REASON_LOST
        if self.state is not None and self.state.blocked_seq is not None:
            return REASON_REFUSED
        if self.last_check is not None and (self.last_check.chain_problems or self.last_check.findings):
            return REASON_CHECK
        return None

    @property
    def lost_message(self) -> str:
        return lost_message(self.state) if self.lost else ""

    @property
    def condition(self) -> str:
        if self.broken:
            return BROKEN
        if not self.configured:
            return OFF
        return LAGGING if self.lagging else OK

    def as_json(self) -> dict:
        """For /health, which is public: states and numbers, no error texts (they can name broker addresses)."""
        check = self.last_check
        age = self.oldest_pending_age_s
        return {
            "state": self.condition,
            "topic": self.topic or None,
            "cluster": self.cluster or None,
            "published_seq": self.state.published_seq if self.state else None,
            "pending": self.pending,
            "oldest_pending_age_s": round(age, 1) if age is not None else None,
            "publishing_ok": bool(self.state and not self.state.error) if self.configured else None,
            "blocked_seq": self.state.blocked_seq if self.state else None,
            "reason": self.reason,
            "lost_seqs": [self.state.lost_first_seq, self.state.lost_last_seq] if self.lost else None,
            "last_check": None if check is None else {
                "at": check.checked_at.isoformat(), "ok": check.ok,
                "problems": len(check.chain_problems) + len(check.findings), "witness_read": not check.witness_error},
        }


def witness_status() -> WitnessStatus:
    config = witness_config()
    cluster, topic = (config.cluster, config.topic) if config else ("", "")
    state = WitnessState.objects.filter(cluster=cluster, topic=topic).first() if config else None
    pending = AuditEvent.objects.filter(seq__gt=state.published_seq if state else 0)
    lag = pending.aggregate(n=Count("pk"), oldest=Min("created_at")) if config else {"n": 0, "oldest": None}
    return WitnessStatus(cluster=cluster, topic=topic, state=state, pending=lag["n"], oldest_pending_at=lag["oldest"],
                         last_check=AuditCheck.objects.first())
