from celery import current_app, shared_task

from brokers import conf
from brokers.sampler import broker_metrics_sample_all


@shared_task(ignore_result=False)
def sample_broker_metrics() -> dict[str, str]:
    try:
        return broker_metrics_sample_all()
    finally:
        # Broker-health rules read what was just stored; by name, so this app does not import the alerts app.
        current_app.send_task("alerts.tasks.evaluate_alerts", expires=conf.sample_interval_s())
