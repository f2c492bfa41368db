from celery import shared_task

from sparkjobs.services import replay_reap_orphans, replay_run


@shared_task(acks_late=False)  # a replay is not re-run by itself after a worker crash: its audit says how it ended
def run_replay(job_id: int) -> str:
    return replay_run(job_id=job_id).state


@shared_task(ignore_result=True)
def reap_replays() -> list[int]:
    return replay_reap_orphans()
