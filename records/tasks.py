from celery import shared_task

from records.import_jobs import import_job_run, import_jobs_reap


@shared_task(acks_late=False)  # an import is not re-run by itself after a worker crash: the reaper ends it
def run_import(job_id: int) -> str:
    return import_job_run(job_id=job_id).state


@shared_task(ignore_result=True)
def reap_imports() -> list[int]:
    return import_jobs_reap()
