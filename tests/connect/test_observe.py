"""connect/observe.py: what beat stores of every connector, without a worker (a registration that answers nothing
keeps its snapshots and says why), and the history's bound."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from connect.models import ConnectCluster, ConnectorEvent, ConnectorSnapshot
from connect.observe import HISTORY_KEPT, connectors_observe

pytestmark = pytest.mark.django_db


def test_a_silent_connect_cluster_keeps_its_snapshots_and_says_why(settings):
    settings.CONNECT_REQUEST_TIMEOUT_S = 1.0
    registration = ConnectCluster.objects.create(cluster="local", name="quiet", url="http://127.0.0.1:1")
    now = timezone.now()
    ConnectorSnapshot.objects.create(cluster="local", connect="quiet", connector="c", type="sink", state="RUNNING",
                                     tasks=[], since=now, seen_at=now)
    old = ConnectorEvent.objects.create(cluster="local", connect="quiet", connector="c", state="RUNNING",
                                        at=now - HISTORY_KEPT - timedelta(minutes=1))
    result = connectors_observe("local")
    assert list(result.errors) == ["local/quiet"] and "did not answer" in result.errors["local/quiet"]
    registration.refresh_from_db()
    assert registration.observe_error and registration.observed_at is None
    assert ConnectorSnapshot.objects.filter(connect="quiet").count() == 1
    assert not ConnectorEvent.objects.filter(pk=old.pk).exists()
