import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _lower_pool_process(**_) -> None:
    """Everything a worker runs is background work, so it yields the CPU to the pages (console/cpu_priority.py).
    Sent in each process that runs tasks (a prefork child, or a solo worker), never in a prefork parent, whose
    children would start lowered with no thread at the base priority to start a cluster's client process from."""
    from console.cpu_priority import lower_this_thread

    lower_this_thread()
