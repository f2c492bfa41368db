from celery import shared_task
from django.conf import settings

from console.clusters.fan_out import task_per_cluster
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from topics.disk import disk_usage_refresh
from topics.selectors import topic_snapshot_refresh


@shared_task(ignore_result=False)
def refresh_topic_snapshots() -> list[str]:
    """One task per cluster, so a big or unanswering cluster delays no other's topic list."""
    return task_per_cluster(refresh_topic_snapshot, expires_s=settings.TOPIC_SNAPSHOT_INTERVAL_S)


@shared_task(ignore_result=False)
def refresh_topic_snapshot(cluster: str) -> dict:
    snapshot = topic_snapshot_refresh(cluster, only_when_due=True)
    try:  # sizes: one DescribeLogDirs for every process, not one per process
        sizes = "read" if disk_usage_refresh(cluster, only_when_due=True) is not None else "not due"
    except (KafkaGatewayError, ConsoleError) as exc:  # the topic table is written; only sizes wait for the next run
        sizes = f"not read: {exc.message}"
    if snapshot is None:
        return {"cluster": cluster, "skipped": "not due, or another process is rebuilding it", "sizes": sizes}
    return {"cluster": cluster, "topics": len(snapshot.rows), "complete": snapshot.complete,
            "taken_at": snapshot.taken_at, "sizes": sizes}
