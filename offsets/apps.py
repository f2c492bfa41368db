from django.apps import AppConfig


class OffsetsConfig(AppConfig):
    name = "offsets"

    def ready(self) -> None:
        from console.clusters.status import StatusLine, register_status_provider
        from console.metrics.sources import register_metrics
        from offsets.history.selectors import recorder_health
        from offsets.lag.selectors import sampler_health
        from offsets.metrics import group_metrics

        def history(cluster: str) -> StatusLine:
            health = recorder_health(cluster)
            return StatusLine("Rebalance history", health.text, health.ok)

        def lag(cluster: str) -> StatusLine:
            health = sampler_health(cluster)
            if health.last_error:
                return StatusLine("Lag sampling", f"Last sample failed: {health.last_error}", False)
            if health.last_ok_at is None:
                return StatusLine("Lag sampling", "Not sampled yet.", False)
            return StatusLine("Lag sampling", f"Last sample at {health.last_ok_at:%Y-%m-%d %H:%M:%S} UTC"
                              + (" (late: is Celery beat running?)" if health.stale else "."), not health.stale)

        register_status_provider(lag)
        register_status_provider(history)
        from console.clusters.dashboard import register_dashboard_panel
        from offsets.dashboard import groups_panel

        register_dashboard_panel(groups_panel)
        self._register_cluster_data()
        register_metrics("offsets", group_metrics, order=10)

    @staticmethod
    def _register_cluster_data() -> None:
        from console.clusters.dependents import ClusterData, register_cluster_data
        from offsets import models

        def kind(label: str, *model_classes) -> ClusterData:
            return ClusterData(
                label,
                count=lambda cluster: sum(m.objects.filter(cluster=cluster).count() for m in model_classes),
                delete=lambda cluster: sum(m.objects.filter(cluster=cluster).delete()[0] for m in model_classes),
            )

        register_cluster_data(kind("rebalance history rows", models.GroupGeneration))
        register_cluster_data(kind("lag samples", models.LagSample))
        register_cluster_data(kind("lag statuses and sweep records", models.GroupLagStatus, models.LagSweep))
        register_cluster_data(kind("recorder positions and state", models.RecorderPosition, models.RecorderStatus,
                                   models.ConsumerGroupState, models.GroupCommitStat))
