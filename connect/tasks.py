from dataclasses import asdict

from celery import current_app, shared_task
from django.conf import settings

from connect.observe import connectors_observe


@shared_task(ignore_result=False)
def observe_connectors() -> dict:
    result = connectors_observe()
    # Connector rules are evaluated on what was just stored, as group rules are after each lag sweep; by name, so
    # this app does not import the alerts app (which reads this one's tables).
    current_app.send_task("alerts.tasks.evaluate_alerts", expires=float(settings.CONNECT_OBSERVE_INTERVAL_S))
    return asdict(result)
