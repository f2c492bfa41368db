"""Done-when of issue 33: a task failure raises one alert (with the task's trace, through an existing channel) and
its resolution one resolve, whatever happens in between; beat's observer keeps the state history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from alerts.evaluation import alerts_evaluate
from alerts.models import Alert
from alerts.services import alert_rule_create
from connect import services
from connect.models import ConnectorEvent
from connect.observe import connectors_observe
from console.audit.actor import Actor
from tests.alerts.conftest import Receiver
from tests.connect.conftest import FILE_SINK

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
NAME = "fragile sink"


@pytest.fixture
def webhook(settings):
    receiver = Receiver()
    settings.ALERT_WEBHOOKS = f"oncall={receiver.url}"
    yield receiver
    receiver.close()


def test_a_failed_task_alerts_once_and_resolves_once(connect_cluster, connect_rest, topic_factory, tmp_path, webhook,
                                                     operator, client_for):
    missing = tmp_path / "not-yet" / "out.txt"
    alert_rule_create(actor=Actor.system(), name="connectors-down", kind="connector", cluster="local",
                      group_pattern="fragile*", statuses=["FAILED"], for_minutes=1, webhook="oncall")
    config = {"connector.class": FILE_SINK, "topics": topic_factory("fragile"), "file": str(missing)}
    assert connect_rest("POST", "connectors", body={"name": NAME, "config": config})[0] == 201
    connect_rest.wait(lambda: [t for t in (connect_rest("GET", "connectors", NAME, "status")[1] or {}).get("tasks", [])
                               if t["state"] == "FAILED"], what="the task failing")

    start = timezone.now()
    connectors_observe()
    assert alerts_evaluate(now=start).opened == 1  # pending: it must hold for a minute
    assert webhook.received == []
    connectors_observe()
    fired = alerts_evaluate(now=start + timedelta(seconds=61))
    assert fired.fired == 1 and len(webhook.received) == 1
    message = webhook.received[0]
    assert message["alert"]["state"] == "firing" and message["alert"]["group"] == f"local/{NAME}"
    assert "task 0 is FAILED" in message["text"] and "Couldn't find or create file" in message["text"]
    assert reverse("connect:connector", args=["local", "local", NAME]) in message["alert"]["link"]
    for minute in (2, 3, 4):  # still failing: nobody is told again
        connectors_observe()
        alerts_evaluate(now=start + timedelta(minutes=minute))
    assert len(webhook.received) == 1

    missing.parent.mkdir()
    services.connector_action(actor=Actor(user=operator, source="web"), cluster="local", connect="local", name=NAME,
                              action="restart", include_tasks=True, only_failed=True, reason="folder made")
    connect_rest.wait_state(NAME, "RUNNING")
    connectors_observe()
    assert alerts_evaluate(now=start + timedelta(minutes=5)).resolved == 1
    for minute in (6, 7):
        connectors_observe()
        alerts_evaluate(now=start + timedelta(minutes=minute))
    assert [m["alert"]["state"] for m in webhook.received] == ["firing", "resolved"]
    assert Alert.objects.get().state == Alert.RESOLVED

    states = list(ConnectorEvent.objects.filter(connector=NAME, task=0).order_by("at", "id").values_list("state",
                                                                                                       flat=True))
    assert states[0] == "FAILED" and states[-1] == "RUNNING"
    page = client_for(operator).get(reverse("connect:connector", args=["local", "local", NAME])).content.decode()
    assert "RESTART" in page and "otto" in page  # the console's own change in the history, with its actor
