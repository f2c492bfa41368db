from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _seed_local(sender, using: str = "default", **kwargs) -> None:
    from connect.registration import connect_seed_local

    connect_seed_local(using=using)


class ConnectConfig(AppConfig):
    name = "connect"
    label = "connect"

    def ready(self) -> None:
        from console.clusters.dependents import ClusterData, register_cluster_data
        from console.metrics.sources import register_metrics
        from connect import models
        from connect.metrics import connector_metrics

        from connect.dashboard import connect_panel
        from console.clusters.dashboard import register_dashboard_panel

        post_migrate.connect(_seed_local, sender=self, dispatch_uid="connect-seed-local")
        register_dashboard_panel(connect_panel)
        register_metrics("connect", connector_metrics, order=40)
        tables = (models.ConnectCluster, models.ConnectorSnapshot, models.ConnectorEvent)
        register_cluster_data(ClusterData(
            "Connect registrations, connector states and their history",
            count=lambda cluster: sum(m.objects.filter(cluster=cluster).count() for m in tables),
            delete=lambda cluster: sum(m.objects.filter(cluster=cluster).delete()[0] for m in tables)))
