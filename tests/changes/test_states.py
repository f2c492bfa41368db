"""changes/states.py: which status may follow which, expiry as read, approvals counted. Pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from changes import states

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(("current", "wanted"), [
    ("pending", "approved"), ("pending", "rejected"), ("pending", "expired"),
    ("approved", "executed"), ("approved", "failed"), ("approved", "stale"),
])
def test_allowed_transitions(current, wanted):
    states.check_transition(current, wanted)


@pytest.mark.parametrize(("current", "wanted"), [
    ("pending", "executed"), ("pending", "stale"), ("approved", "pending"), ("approved", "rejected"),
    ("executed", "approved"), ("rejected", "approved"), ("expired", "approved"), ("stale", "approved"),
    ("failed", "executed"), ("executed", "executed"),
])
def test_refused_transitions(current, wanted):
    with pytest.raises(states.TransitionRefused):
        states.check_transition(current, wanted)


def test_no_status_is_a_dead_end_except_the_final_ones():
    assert {s for s, nexts in states.TRANSITIONS.items() if not nexts} == states.FINAL
    assert set(states.TRANSITIONS) == set(states.STATUSES)


def test_a_pending_request_past_its_expiry_reads_as_expired():
    assert states.effective_status("pending", NOW - timedelta(seconds=1), NOW) == "expired"
    assert states.effective_status("pending", NOW, NOW) == "expired"
    assert states.effective_status("pending", NOW + timedelta(hours=1), NOW) == "pending"
    assert states.effective_status("executed", NOW - timedelta(days=1), NOW) == "executed"


def test_approvals_needed():
    assert not states.approvals_met(0, 1)
    assert states.approvals_met(1, 1)
    assert not states.approvals_met(1, 2)
    assert states.approvals_met(2, 2)
    assert states.approvals_met(1, 0)  # never fewer than one other person
    assert not states.approvals_met(0, 0)
