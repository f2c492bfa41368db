from celery import current_app, shared_task
from django.conf import settings

from offsets.lag.sampler import lag_sample_all


@shared_task(ignore_result=False)
def sample_lag() -> dict[str, str]:
    try:
        return lag_sample_all()
    finally:
        # Alert rules read what the sweep just stored; sent by name so offsets does not depend on the alerts app.
        # Also after a failed sweep: a sampler that keeps failing is itself something to alert on.
        current_app.send_task("alerts.tasks.evaluate_alerts", expires=float(settings.LAG_SAMPLE_INTERVAL_S))
