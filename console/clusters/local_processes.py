"""The processes `make run` supervises on this host (devstack/keep_running.py), as the console reports
them. A `local` broker that keeps failing to start is otherwise just "did not answer" on every page, while the
reason ("Too many open files") sits in a terminal nobody reads; keep_running's status files carry it here."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from console.process_status import FAILED, ProcessStatus, status_read, statuses_read

LOCAL_BROKER_PROCESS = "kafka"  # its name in the Procfile
MSG_LOCAL_BROKER_FAILED = "The local broker failed to start: {error}"
MSG_GAVE_UP = (" ({failures} failures in a row, so it is no longer started: fix the cause, then run "
               "`python -m console.process_status retry kafka` or restart `make run`)")
MSG_RETRYING = " ({failures} failures in a row; it is being started again)"


def supervised_processes() -> dict[str, ProcessStatus]:
    return statuses_read(Path(settings.PROCESS_STATUS_DIR))


def local_broker_failure(cluster_name: str) -> str | None:
    """Why the `local` cluster does not answer, when the broker `make run` supervises keeps dying; None for any
    other cluster, or when that broker is not failing (then "did not answer" is all there is to say)."""
    if cluster_name != settings.KAFKA_LOCAL_CLUSTER_NAME:
        return None
    status = status_read(LOCAL_BROKER_PROCESS, Path(settings.PROCESS_STATUS_DIR))
    if status is None or not status.failing:
        return None
    suffix = MSG_GAVE_UP if status.state == FAILED else MSG_RETRYING
    return (MSG_LOCAL_BROKER_FAILED.format(error=status.last_error or status.last_exit)
            + suffix.format(failures=status.failures))
