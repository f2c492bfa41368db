from celery import shared_task
from django.conf import settings

from console.clusters.models import Cluster
from topics.selectors import topic_snapshot_refresh


@shared_task(ignore_result=False)
def refresh_topic_snapshots() -> list[str]:
    """One task per cluster, so a big or unanswering cluster delays no other's topic list."""
    names = list(Cluster.objects.order_by("name").values_list("name", flat=True))
    for name in names:
        refresh_topic_snapshot.apply_async((name,), expires=settings.TOPIC_SNAPSHOT_INTERVAL_S)
    return names


@shared_task(ignore_result=False)
def refresh_topic_snapshot(cluster: str) -> dict:
    snapshot = topic_snapshot_refresh(cluster)
    if snapshot is None:
        return {"cluster": cluster, "skipped": "another process is rebuilding it"}
    return {"cluster": cluster, "topics": len(snapshot.rows), "complete": snapshot.complete,
            "taken_at": snapshot.taken_at}
