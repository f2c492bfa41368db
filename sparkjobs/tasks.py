import logging
import threading

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from sparkjobs import runner
from sparkjobs.services import replay_reap_orphans, replay_run

logger = logging.getLogger(__name__)


@shared_task(acks_late=False)  # a replay is not re-run by itself after a worker crash: its audit says how it ended
def run_replay(job_id: int) -> str:
    return replay_run(job_id=job_id).state


@shared_task(ignore_result=True)
def reap_replays() -> list[int]:
    return replay_reap_orphans()


@worker_ready.connect
def start_replay_driver(**_) -> None:
    """A worker coming up starts its resident Spark driver in the background (it owns it: the driver stops when
    this process goes), so the first replay does not wait for Spark to start."""
    if settings.REPLAY_DRIVER_PRESTART:
        threading.Thread(target=_start_driver, daemon=True, name="replay-driver-start").start()


def _start_driver() -> None:
    try:
        driver = runner.ensure_driver()
    except (OSError, RuntimeError) as exc:  # a replay will say the same, with the job
        logger.warning("The resident Spark driver did not start: %s", exc)
        return
    logger.info("Resident Spark driver %s ready; its log: %s", driver.pid, driver.log_path)
