"""One action per row: intents joined with the rows that ended them (console/audit/selectors.py)."""

import uuid

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.selectors import AuditFilters, audit_actions, with_intents
from console.audit.services import audit_record, audit_refusal, audited

pytestmark = pytest.mark.django_db


@pytest.fixture
def log(admin):
    """A reset that succeeded, one that failed, a refusal, a replay still running and cancelled under its own
    correlation id, and a row written without an intent."""
    actor = Actor(user=admin, source="web", remote_addr="127.0.0.1")
    with audited(actor=actor, action="group.offsets.reset", cluster="local", target="group:billing",
                 before={"t": {"0": 5}}) as record:
        record.after = {"t": {"0": 0}}
    with pytest.raises(RuntimeError), audited(actor=actor, action="topic.delete", cluster="local",
                                              target="topic:old"):
        raise RuntimeError("boom")
    audit_refusal(actor=actor, action="group.offsets.reset", cluster="local", target="group:busy", reason="r",
                  params={}, error="the group is active")
    job = uuid.uuid4()
    audit_record(actor=actor, action="replay.run", outcome="intent", cluster="local", target="topic:orders",
                 correlation_id=job)
    audit_record(actor=actor, action="replay.cancel", outcome="success", cluster="local", target="topic:orders",
                 correlation_id=job)
    audit_record(actor=actor, action="topic.create", outcome="success", cluster="local", target="topic:new")
    return actor


def _shown(filters=AuditFilters()):
    return [(a.head.action, a.head.target, a.result) for a in with_intents(audit_actions(filters))]


def test_each_action_is_one_row_with_its_result_newest_first(log):
    assert AuditEvent.objects.count() == 8
    assert _shown() == [("topic.create", "topic:new", "success"), ("replay.cancel", "topic:orders", "success"),
                        ("replay.run", "topic:orders", "running"), ("group.offsets.reset", "group:busy", "refused"),
                        ("topic.delete", "topic:old", "failure"), ("group.offsets.reset", "group:billing", "success")]


def test_an_ended_action_carries_its_intent_and_how_long_it_took(log):
    actions = {a.head.target: a for a in with_intents(audit_actions(AuditFilters()))}
    reset = actions["group:billing"]
    assert reset.intent.outcome == "intent" and reset.intent.correlation_id == reset.head.correlation_id
    assert reset.head.before == {"t": {"0": 5}} and reset.head.after == {"t": {"0": 0}}
    assert 0 <= reset.duration_s < 5
    assert actions["topic:new"].intent is None and actions["topic:new"].duration_s is None
    assert actions["group:busy"].intent is None  # refused before anything was started


def test_the_result_filter_matches_the_row_that_ended_the_action(log):
    assert _shown(AuditFilters(outcome="intent")) == [("replay.run", "topic:orders", "running")]
    assert _shown(AuditFilters(outcome="failure")) == [("topic.delete", "topic:old", "failure")]
    assert _shown(AuditFilters(target="billing")) == [("group.offsets.reset", "group:billing", "success")]
