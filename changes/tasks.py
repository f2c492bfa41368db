from celery import shared_task

from changes.services import change_requests_expire


@shared_task(ignore_result=True)
def expire_change_requests() -> int:
    return change_requests_expire()
