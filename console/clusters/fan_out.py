"""Background work split into one Celery task per registered cluster, so a big or unanswering cluster delays no
other's."""

from __future__ import annotations

from console.clusters.models import Cluster


def task_per_cluster(task, *, expires_s: float) -> list[str]:
    """Queues `task(name)` for every registered cluster, each dropped if not started within `expires_s` (the next
    round queues a fresh one). Returns the names."""
    names = list(Cluster.objects.order_by("name").values_list("name", flat=True))
    for name in names:
        task.apply_async((name,), expires=expires_s)
    return names
