"""The audit chain: appends link up, audit_verify proves it, and any tampering is detected."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from console.audit.actor import Actor
from console.audit.management.commands.audit_verify import MSG_BROKEN
from console.audit.models import AppendOnlyError, AuditEvent
from console.audit.services import audit_record, audited

pytestmark = pytest.mark.django_db


def _append(n: int) -> list[AuditEvent]:
    return [
        audit_record(actor=Actor.system(), action="test.append", outcome="success", cluster="local",
                     target=f"topic:t{i}", params={"i": i, "nested": {"b": [1, 2]}}, before={"x": i}, after={"x": i + 1})
        for i in range(n)
    ]


def _raw_sql(sql: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_events_chain_each_to_the_previous_hash():
    events = _append(3)

    assert [e.seq for e in events] == [1, 2, 3]
    assert events[0].prev_hash == "0" * 64
    assert events[1].prev_hash == events[0].hash and events[2].prev_hash == events[1].hash


def test_audit_verify_counts_events_of_an_intact_chain(capsys):
    _append(4)

    call_command("audit_verify")

    assert "Audit chain intact: 4 events." in capsys.readouterr().out


def test_audit_verify_detects_an_altered_row(capsys):
    _append(3)
    _raw_sql("UPDATE audit_auditevent SET reason = %s WHERE seq = 2", ["edited later"])

    with pytest.raises(CommandError, match="BROKEN"):
        call_command("audit_verify")
    assert "event #2: hash does not match its content" in capsys.readouterr().err


def _assert_broken(message: str, *, chain: int, count: int) -> None:
    # The witness findings depend on what earlier tests left on the session broker's witness topic, not on the chain.
    before, after = MSG_BROKEN.split("{findings}")
    assert message.startswith(before.format(chain=chain)) and message.endswith(after.format(count=count)), message


def test_audit_verify_detects_a_removed_row(capsys):
    _append(3)
    _raw_sql("DELETE FROM audit_auditevent WHERE seq = 2")

    with pytest.raises(CommandError) as broken:
        call_command("audit_verify")
    _assert_broken(str(broken.value), chain=2, count=2)
    err = capsys.readouterr().err
    assert "expected sequence number 2" in err and "does not link" in err


def test_audit_verify_detects_an_inserted_row(capsys):
    events = _append(2)
    # A forger copies a real row's hash fields but cannot compute a valid keyed hash for new content.
    forged = AuditEvent(seq=3, created_at=events[1].created_at, actor_name="mallory", source="web", action="topic.delete",
                        target="topic:orders", outcome="success", prev_hash=events[1].hash, hash="f" * 64)
    forged.save()

    with pytest.raises(CommandError) as broken:
        call_command("audit_verify")
    _assert_broken(str(broken.value), chain=1, count=3)
    assert "event #3: hash does not match" in capsys.readouterr().err


def test_the_application_cannot_update_or_delete_events():
    event = _append(1)[0]

    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        event.delete()
    with pytest.raises(AppendOnlyError):
        AuditEvent.objects.filter(pk=event.pk).update(reason="x")
    with pytest.raises(AppendOnlyError):
        AuditEvent.objects.all().delete()


def test_audited_writes_intent_then_success_with_one_correlation_id():
    with audited(actor=Actor.system(), action="thing.do", cluster="local", target="topic:a", reason="because",
                 params={"p": 1}, before={"v": 1}) as record:
        assert AuditEvent.objects.get().outcome == "intent"  # committed before the action runs
        record.after = {"v": 2}

    intent, outcome = AuditEvent.objects.order_by("seq")
    assert (intent.outcome, outcome.outcome) == ("intent", "success")
    assert intent.correlation_id == outcome.correlation_id
    assert (outcome.before, outcome.after, outcome.reason) == ({"v": 1}, {"v": 2}, "because")


def test_audited_records_failure_with_the_error_and_reraises():
    with pytest.raises(ValueError):
        with audited(actor=Actor.system(), action="thing.do", target="topic:a"):
            raise ValueError("broker refused")

    outcome = AuditEvent.objects.order_by("seq").last()
    assert outcome.outcome == "failure" and "broker refused" in outcome.error


def test_audit_verify_chain_only_asks_no_cluster_and_stores_nothing(capsys, settings):
    from console.audit.models import AuditCheck

    settings.AUDIT_WITNESS_CLUSTER = "no-such-cluster"  # would fail the witness check if it were asked
    _append(2)

    call_command("audit_verify", "--chain-only")

    assert "Audit chain intact: 2 events." in capsys.readouterr().out
    assert not AuditCheck.objects.exists()
