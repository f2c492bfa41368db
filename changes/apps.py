from django.apps import AppConfig


class ChangesConfig(AppConfig):
    name = "changes"
    verbose_name = "Four-eyes changes: protected clusters and change requests"

    def ready(self) -> None:
        from changes.models import Protection
        from console.clusters.dependents import ClusterData, register_cluster_data

        # A removed cluster's protection goes with it (a cluster registered again under the name starts
        # unprotected); its change requests stay, as the audit log does: they are the record of who asked.
        register_cluster_data(ClusterData(
            "four-eyes protection", count=lambda cluster: Protection.objects.filter(cluster=cluster).count(),
            delete=lambda cluster: Protection.objects.filter(cluster=cluster).delete()[0]))
