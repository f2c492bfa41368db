from django.apps import AppConfig
from django.conf import settings


class RecordsConfig(AppConfig):
    name = "records"
    verbose_name = "Messages: search, produce and the schema registry"

    def ready(self) -> None:
        from console.clusters.dependents import ClusterData, register_cluster_data
        from records.models import ImportJob

        # console/settings.py has no room for another beat entry: the app adds its own before beat reads them.
        settings.CELERY_BEAT_SCHEDULE.setdefault("reap-imports", {
            "task": "records.tasks.reap_imports", "schedule": 30.0, "options": {"expires": 30.0}})
        register_cluster_data(ClusterData(
            "imports started from the page",
            count=lambda cluster: ImportJob.objects.filter(cluster=cluster).count(),
            delete=lambda cluster: ImportJob.objects.filter(cluster=cluster).delete()[0]))
