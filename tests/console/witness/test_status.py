"""What /health and the audit page say about the witness, from stored state only."""

from __future__ import annotations

import pytest
from django.test import override_settings
from django.utils import timezone

from console.audit.models import AuditCheck, WitnessState
from tests.console.witness.conftest import append_events

pytestmark = pytest.mark.django_db


def _health_witness(client) -> dict:
    """As the metrics scraper sees it: anonymous callers get the state word only (tests/console/test_health.py)."""
    with override_settings(METRICS_TOKEN="witness-test-token"):
        return client.get("/health", headers={"Authorization": "Bearer witness-test-token"}).json()["audit_witness"]


def test_health_says_ok_when_everything_is_published(client, witness):
    append_events(3)
    WitnessState.objects.create(cluster="local", topic=witness.topic, published_seq=3, published_at=timezone.now())

    body = _health_witness(client)

    assert body["state"] == "ok" and (body["published_seq"], body["pending"], body["publishing_ok"]) == (3, 0, True)


def test_health_says_lagging_when_events_wait_too_long_and_names_no_error_text(client, witness, settings):
    settings.AUDIT_WITNESS_LAG_ALERT_S = 0
    append_events(3)
    WitnessState.objects.create(cluster="local", topic=witness.topic, published_seq=1,
                                error="Cluster 'local' did not answer within 3 s (127.0.0.1:9092/bootstrap: refused)")

    body = _health_witness(client)

    assert (body["state"], body["pending"], body["publishing_ok"]) == ("lagging", 2, False)
    assert body["oldest_pending_age_s"] >= 0 and "9092" not in str(body)


def test_health_says_broken_after_a_check_found_rows_missing(client, witness, viewer, client_for):
    append_events(2)
    AuditCheck.objects.create(checked_at=timezone.now(), ok=False, events=2, witness_cluster="local",
                              witness_topic=witness.topic, findings=[{"kind": "missing-tail", "ranges": [[3, 4]],
                                                                      "message": "#3-#4: published to the witness"}])

    body = _health_witness(client)

    assert body["state"] == "broken" and body["last_check"]["ok"] is False and body["last_check"]["problems"] == 1
    page = client_for(viewer).get("/audit/").content.decode()
    assert "#3-#4: published to the witness" in page and "broken" in page


def test_health_says_off_when_the_witness_is_switched_off(client, settings, db):
    settings.AUDIT_WITNESS_ENABLED = False

    assert _health_witness(client)["state"] == "off"
