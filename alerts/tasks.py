from dataclasses import asdict

from celery import shared_task

from alerts.evaluation import alerts_evaluate


@shared_task(ignore_result=False)
def evaluate_alerts() -> dict[str, int]:
    result = alerts_evaluate()
    return asdict(result)
