from celery import current_app, shared_task
from django.conf import settings

from console.clusters.fan_out import task_per_cluster
from offsets.lag.sampler import lag_sample_all
from offsets.selectors import group_snapshot_refresh, group_snapshots_refresh


@shared_task(ignore_result=False)
def sample_lag() -> dict[str, str]:
    try:
        outcome = lag_sample_all()
    finally:
        # Alert rules read what the sweep just stored; sent by name so offsets does not depend on the alerts app.
        # Also after a failed sweep: a sampler that keeps failing is itself something to alert on.
        current_app.send_task("alerts.tasks.evaluate_alerts", expires=float(settings.LAG_SAMPLE_INTERVAL_S))
    # The groups lists filter and order on the statuses just stored.
    group_snapshots_refresh(list(outcome))
    return outcome


@shared_task(ignore_result=False)
def refresh_group_snapshots() -> list[str]:
    """One task per cluster, so a big or unanswering cluster delays no other's groups list."""
    return task_per_cluster(refresh_group_snapshot, expires_s=settings.GROUP_SNAPSHOT_INTERVAL_S)


@shared_task(ignore_result=False)
def refresh_group_snapshot(cluster: str) -> dict:
    """Only when the lag sweep has not refreshed it lately (the sweep failing or switched off)."""
    snapshot = group_snapshot_refresh(cluster, unless_younger_than_s=1.5 * settings.GROUP_SNAPSHOT_INTERVAL_S)
    if snapshot is None:
        return {"cluster": cluster, "skipped": "fresh enough, or another process is rebuilding it"}
    return {"cluster": cluster, "groups": len(snapshot.rows), "complete": snapshot.complete,
            "taken_at": snapshot.taken_at}
