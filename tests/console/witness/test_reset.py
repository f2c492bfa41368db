"""Clearing the witness alarm: only the admin's audited audit_witness_reset, naming the lost range exactly; the
publisher then carries on after the high-water mark (never from #1) and audit_verify agrees again."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from console.accounts.roles import MSG_ROLE_REQUIRED
from console.audit.actor import Actor
from console.audit.models import AuditEvent, WitnessState
from console.witness.publisher import witness_publish
from console.witness.reset import MSG_ACCEPT_MISMATCH, MSG_NO_ALARM
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import ClusterConnection
from tests.console.witness.conftest import append_events, read_witness
from tests.console.witness.test_loss import _delete_topic

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _reset(*args: str) -> None:
    call_command("audit_witness_reset", *args)


def test_reset_accepts_only_the_named_range_then_publishing_resumes_after_the_mark(witness, kafka_node, admin,
                                                                                  operator, capsys):
    gateway = KafkaAdmin(ClusterConnection("test", kafka_node.bootstrap), timeout=10)
    gateway.create_topic(witness.topic, partitions=1, replication_factor=1, configs={})
    append_events(5)
    witness_publish(actor=Actor.system())
    _delete_topic(gateway, witness.topic)
    assert witness_publish(actor=Actor.system()).published == 0
    with pytest.raises(CommandError, match="#1-#5"):
        _reset("--actor", admin.username, "--reason", "r", "--accept", "#1-#4")
    with pytest.raises(CommandError) as refused:
        _reset("--actor", operator.username, "--reason", "r", "--accept", "#1-#5")  # admins only
    assert str(refused.value) == MSG_ROLE_REQUIRED.format(required="admin", who=operator.username, current="operator")
    assert WitnessState.objects.get().lost

    _reset("--actor", admin.username, "--reason", "witness topic deleted by mistake", "--accept", "#1-#5")

    out = capsys.readouterr().out
    assert "no longer holds #1-#5" in out and "holds 5 of those 5" in out and "resumes after #5" in out
    reset = AuditEvent.objects.get(action="audit.witness.reset", outcome="success")
    assert reset.params["accepted"] == [1, 5] and reset.actor_name == "ada"
    assert witness_publish(actor=Actor.system()).error == ""
    seqs = [b["seq"] for b in read_witness(kafka_node.bootstrap, witness.topic)]
    assert seqs[0] == 6 and seqs == list(range(6, AuditEvent.objects.count() + 1))  # the reset first, never #1
    call_command("audit_verify")  # #1-#5 are accepted as unwitnessed, everything after agrees
    with pytest.raises(CommandError, match=MSG_NO_ALARM):
        _reset("--actor", admin.username, "--reason", "r", "--accept", "#1-#5")


def test_the_mismatch_message_names_the_range_to_type():
    assert "#3-#9" in MSG_ACCEPT_MISMATCH.format(seqs="#3-#9", given="#1-#9")
