"""audit_verify against the witness on the real broker: rows removed at the end or in the middle, changed or
inserted straight in the database (as an attacker with database access would) are each reported with their seqs
and a non-zero exit, and the audit page shows the stored check."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from console.audit.actor import Actor
from console.audit.models import AuditCheck, AuditEvent
from console.witness.publisher import witness_publish
from devstack.kafka import free_port
from console.paths import PROJECT_DIR
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import ClusterConnection
from tests.console.witness.conftest import append_events

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def published(witness, kafka_node):
    """Events #1-#5, all published (the topic made beforehand, so no audited topic creation joins them)."""
    KafkaAdmin(ClusterConnection("setup", kafka_node.bootstrap), timeout=10).create_topic(
        witness.topic, partitions=1, replication_factor=1, configs={})
    events = append_events(5)
    assert witness_publish(actor=Actor.system()).up_to == 5
    return events


def _sql(statement: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def _insert_row(seq: int, prev_hash: str) -> None:
    """What someone with write access to the database could add: any content, but no key for a valid hash."""
    columns = ("seq", "created_at", "actor_name", "source", "cluster", "action", "target", "reason", "params",
               "before", "after", "outcome", "error", "correlation_id", "prev_hash", "hash")
    values = (seq, timezone.now(), "mallory", "web", "local", "topic.delete", "topic:orders", "", "{}", "null", "null",
              "success", "", uuid.uuid4().hex, prev_hash, "f" * 64)
    quoted = ", ".join(f'"{c}"' for c in columns)
    _sql(f"INSERT INTO audit_auditevent ({quoted}) VALUES ({', '.join(['%s'] * len(columns))})", values)


def _verify(capsys) -> tuple[str, str]:
    with pytest.raises(CommandError) as raised:
        call_command("audit_verify")
    out, err = capsys.readouterr()
    return out, err + str(raised.value)


def test_an_intact_log_agrees_with_its_witness(published, capsys, client_for, viewer):
    call_command("audit_verify")

    out = capsys.readouterr().out
    assert "Audit chain intact: 5 events." in out and "holds 5 events (#1-#5); 0 not published yet" in out
    assert AuditCheck.objects.get().ok
    assert "no problems</span> in 5 events" in client_for(viewer).get("/audit/").content.decode()


def test_the_newest_rows_removed_are_a_missing_tail(published, capsys, client_for, viewer):
    _sql("DELETE FROM audit_auditevent WHERE seq IN (4, 5)")

    out, err = _verify(capsys)

    assert "Audit chain intact: 3 events." in out  # the chain alone cannot tell
    message = "#4-#5: published to the witness, missing at the end of the database (newest rows removed)"
    assert f"witness: {message}" in err and "BROKEN" in err
    assert message in client_for(viewer).get("/audit/").content.decode()


def test_a_middle_row_removed_is_missing(published, capsys, client_for, viewer):
    _sql("DELETE FROM audit_auditevent WHERE seq = 3")

    _, err = _verify(capsys)

    message = "#3: published to the witness, missing from the database"
    assert f"witness: {message}" in err
    assert message in client_for(viewer).get("/audit/").content.decode()


def test_a_changed_row_differs_from_the_witness(published, capsys, client_for, viewer):
    _sql("UPDATE audit_auditevent SET reason = %s WHERE seq = 2", ["nothing to see here"])

    _, err = _verify(capsys)

    message = "#2: differs from what the witness holds"
    assert f"witness: {message}" in err
    assert message in client_for(viewer).get("/audit/").content.decode()


def test_an_inserted_row_is_never_published_and_reported(published, capsys, client_for, viewer):
    _insert_row(6, prev_hash=published[-1].hash)

    blocked = witness_publish(actor=Actor.system())
    _, err = _verify(capsys)

    message = "#6: not published yet and does not continue the chain"
    assert blocked.blocked_seq == 6 and f"witness: {message}" in err
    page = client_for(viewer).get("/audit/").content.decode()
    assert message in page and "Publishing stopped at event #6" in page


def test_a_witness_that_cannot_be_read_fails_the_check(published, capsys, settings):
    from console.clusters.models import Cluster

    Cluster.objects.create(name="gone", bootstrap_servers=f"127.0.0.1:{free_port()}")
    settings.AUDIT_WITNESS_CLUSTER = "gone"

    _, err = _verify(capsys)

    assert "Witness could not be read: Cluster 'gone' did not answer" in err
    assert AuditCheck.objects.get().witness_error


@pytest.mark.django_db(transaction=True)
def test_the_shell_exits_non_zero_naming_the_removed_rows(published, witness):
    """The issue's own case, as an auditor runs it: the two newest rows deleted, then manage.py audit_verify."""
    _sql("DELETE FROM audit_auditevent WHERE seq IN (4, 5)")
    db = connection.settings_dict
    database_url = (f"sqlite:///{db['NAME']}" if db["ENGINE"].endswith("sqlite3") else
                    f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}")
    env = {**os.environ, "DATABASE_URL": database_url, "AUDIT_WITNESS_CLUSTER": "local",
           "AUDIT_WITNESS_TOPIC": witness.topic}

    run = subprocess.run([sys.executable, "manage.py", "audit_verify"], cwd=PROJECT_DIR, env=env,
                         capture_output=True, text=True, timeout=60)

    assert run.returncode == 1, run.stderr
    assert "#4-#5: published to the witness, missing at the end" in run.stderr
    assert AuditEvent.objects.count() == 3
