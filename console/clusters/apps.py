from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _seed_local(sender, using: str = "default", **kwargs) -> None:
    from console.clusters.services import cluster_seed_local

    cluster_seed_local(using=using)


class ClustersConfig(AppConfig):
    name = "console.clusters"
    label = "clusters"

    def ready(self) -> None:
        # A module-level receiver: signals hold receivers weakly, and a function defined inside ready() was
        # collected as soon as ready() returned, so migrate never seeded the `local` cluster.
        post_migrate.connect(_seed_local, sender=self, dispatch_uid="clusters-seed-local")
        from console.footprint import footprint_metrics
        from console.metrics.sources import register_metrics

        register_metrics("footprint", footprint_metrics, order=60)
