from celery import shared_task

from offsets.lag.sampler import lag_sample_all


@shared_task(ignore_result=False)
def sample_lag() -> dict[str, str]:
    return lag_sample_all()
