from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_migrate


def _seed_local(sender, using: str = "default", **kwargs) -> None:
    from brokers.services import metrics_source_seed_local

    metrics_source_seed_local(using=using)


class BrokersConfig(AppConfig):
    name = "brokers"
    label = "brokers"

    def ready(self) -> None:
        from brokers import conf, models
        from brokers.metrics import broker_metrics
        from console.clusters.dependents import ClusterData, register_cluster_data
        from console.metrics.sources import register_metrics

        post_migrate.connect(_seed_local, sender=self, dispatch_uid="brokers-seed-local")
        register_metrics("brokers", broker_metrics, order=50)
        # console/settings.py has no room for another beat entry: the app adds its own before beat reads them.
        interval = conf.sample_interval_s()
        settings.CELERY_BEAT_SCHEDULE.setdefault("sample-broker-metrics", {
            "task": "brokers.tasks.sample_broker_metrics", "schedule": interval, "options": {"expires": interval}})
        tables = (models.MetricsSource, models.BrokerSample, models.BrokerState, models.SamplerRun)
        register_cluster_data(ClusterData(
            "broker metrics: their source, samples and the sampler's state",
            count=lambda cluster: sum(m.objects.filter(cluster=cluster).count() for m in tables),
            delete=lambda cluster: sum(m.objects.filter(cluster=cluster).delete()[0] for m in tables)))
