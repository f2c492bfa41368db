"""How a submitted replay reaches a worker. The Celery task runs the replay service, so the service must not import
the task; the app registers the task's sender here when Django starts (sparkjobs.apps) and the service sends
through it."""

from __future__ import annotations

from collections.abc import Callable

_sender: Callable[[int], None] | None = None


def register_sender(sender: Callable[[int], None]) -> None:
    global _sender
    _sender = sender


def send(job_id: int) -> None:
    if _sender is None:  # sparkjobs is not an installed app in this process
        raise RuntimeError("no replay sender is registered")
    _sender(job_id)
