"""The life of a change request, as pure rules: which status may follow which, when a pending request counts as
expired, and when it has its approvals.

    pending ──approve (enough)──> approved ──> executed | failed | stale
       │  └──break-glass────────────┘
       ├──reject──> rejected
       └──expiry──> expired

`approved` lasts only while the change runs: it is the claim that makes one approver, not two, execute it."""

from __future__ import annotations

from datetime import datetime

PENDING, APPROVED, EXECUTED, REJECTED = "pending", "approved", "executed", "rejected"
EXPIRED, FAILED, STALE = "expired", "failed", "stale"
STATUSES = (PENDING, APPROVED, EXECUTED, REJECTED, EXPIRED, FAILED, STALE)
FINAL = frozenset({EXECUTED, REJECTED, EXPIRED, FAILED, STALE})
TRANSITIONS: dict[str, frozenset[str]] = {
    PENDING: frozenset({APPROVED, REJECTED, EXPIRED}),
    APPROVED: frozenset({EXECUTED, FAILED, STALE}),
    **{status: frozenset() for status in FINAL},
}

MSG_TRANSITION = "Change request #{id} is {current}: it cannot become {wanted}."


class TransitionRefused(ValueError):
    pass


def check_transition(current: str, wanted: str) -> None:
    if wanted not in TRANSITIONS.get(current, frozenset()):
        raise TransitionRefused(f"{current} -> {wanted}")


def effective_status(status: str, expires_at: datetime, now: datetime) -> str:
    """What a request is now: a pending one past its expiry is expired, whether or not the beat has written it."""
    return EXPIRED if status == PENDING and expires_at <= now else status


def approvals_met(approvals: int, required: int) -> bool:
    return approvals >= max(1, required)
