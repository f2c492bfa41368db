"""The audit of a bulk action: one event for the batch (intent, then its outcome naming what failed) and, for each
object, its own intent and outcome, so the log reads the same per topic or group as after a single change, and a
batch can be found from any of its objects (params["batch"])."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.services import audit_record

MSG_BATCH_FAILED = "{failed} of {total} failed: {names}"


@dataclass(frozen=True)
class BatchItem:
    name: str
    target: str  # the audit target, e.g. "topic:orders"
    before: Any = None
    params: dict = field(default_factory=dict)


@dataclass
class BatchOutcome:
    """What a bulk action did: the objects done, those Kafka (or a check) refused with why, by name."""

    action: str
    done: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    batch_id: str = ""
    after: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.done) + len(self.failed)


class AuditBatch:
    """The batch's intent is written when it is made; `finish` writes its outcome."""

    def __init__(self, *, actor: Actor, action: str, cluster: str, reason: str, names: list[str],
                 params: dict | None = None) -> None:
        self.actor, self.action, self.cluster, self.reason = actor, action, cluster, reason
        self.params = {**(params or {}), "objects": names, "count": len(names)}
        self.id = uuid.uuid4()
        audit_record(actor=actor, action=action, outcome=AuditEvent.Outcome.INTENT, cluster=cluster,
                     target=self.target, reason=reason, params=self.params, correlation_id=self.id)

    @property
    def target(self) -> str:
        return f"batch:{self.params['count']} objects"

    def finish(self, outcome: BatchOutcome) -> BatchOutcome:
        outcome.batch_id = str(self.id)
        error = ""
        if outcome.failed:
            error = MSG_BATCH_FAILED.format(failed=len(outcome.failed), total=outcome.total,
                                            names=", ".join(sorted(outcome.failed)))
        audit_record(actor=self.actor, action=self.action,
                     outcome=AuditEvent.Outcome.FAILURE if outcome.failed else AuditEvent.Outcome.SUCCESS,
                     cluster=self.cluster, target=self.target, reason=self.reason, params=self.params,
                     after={"done": outcome.done, "failed": outcome.failed}, error=error, correlation_id=self.id)
        return outcome

    def run_items(self, *, item_action: str, items: list[BatchItem],
                  run: Callable[[list[str]], dict[str, str]],
                  read_after: Callable[[list[str]], dict[str, Any]] | None = None) -> BatchOutcome:
        """Writes each object's intent, makes the one batched change `run(names)` (which returns the refused ones,
        name -> message), then each object's outcome. Kafka failing as a whole fails every object, and is raised
        once the log says so."""
        correlations = {}
        for item in items:
            correlations[item.name] = uuid.uuid4()
            audit_record(actor=self.actor, action=item_action, outcome=AuditEvent.Outcome.INTENT,
                         cluster=self.cluster, target=item.target, reason=self.reason,
                         params={**item.params, "batch": str(self.id)}, before=item.before,
                         correlation_id=correlations[item.name])
        names = [item.name for item in items]
        raised: BaseException | None = None
        try:
            failed = run(names) if names else {}
        except BaseException as exc:  # the log must say it failed before the error goes on
            raised = exc
            failed = {name: getattr(exc, "message", "") or f"{type(exc).__name__}: {exc}" for name in names}
        done = [name for name in names if name not in failed]
        after = read_after(done) if read_after is not None and done and raised is None else {}
        for item in items:
            common = dict(actor=self.actor, action=item_action, cluster=self.cluster, target=item.target,
                          reason=self.reason, params={**item.params, "batch": str(self.id)}, before=item.before,
                          correlation_id=correlations[item.name])
            if item.name in failed:
                audit_record(**common, outcome=AuditEvent.Outcome.FAILURE, error=failed[item.name])
            else:
                audit_record(**common, outcome=AuditEvent.Outcome.SUCCESS, after=after.get(item.name))
        outcome = BatchOutcome(action=self.action, done=done, failed=dict(failed), after=after)
        if raised is not None:
            self.finish(outcome)
            raise raised
        return outcome
