import logging

from celery import current_app, shared_task
from django.conf import settings

from console.clusters.fan_out import task_per_cluster
from offsets.lag.sampler import lag_sample_all
from offsets.selectors import group_snapshot_from_listing, group_snapshot_refresh

log = logging.getLogger(__name__)


@shared_task(ignore_result=False)
def sample_lag() -> dict[str, str]:
    try:
        # The groups lists filter and order on the statuses just stored, from the listing the sweep made.
        outcome = lag_sample_all(on_swept=_groups_list_from_sweep)
    finally:
        # Alert rules read what the sweep just stored; sent by name so offsets does not depend on the alerts app.
        # Also after a failed sweep: a sampler that keeps failing is itself something to alert on.
        current_app.send_task("alerts.tasks.evaluate_alerts", expires=float(settings.LAG_SAMPLE_INTERVAL_S))
    return outcome


def _groups_list_from_sweep(cluster: str, result) -> None:
    if result.listed is None:
        return
    try:
        group_snapshot_from_listing(cluster, result.listed.listings, result.listed.problem, result.listed.taken_at)
    except Exception:  # noqa: BLE001 - the next clusters' sweeps must go on; beat rebuilds this list later
        log.exception("The groups list of %s keeps its last snapshot", cluster)


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
