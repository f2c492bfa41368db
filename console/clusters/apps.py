from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ClustersConfig(AppConfig):
    name = "console.clusters"
    label = "clusters"

    def ready(self) -> None:
        from console.clusters.services import cluster_seed_local

        def seed(sender, **kwargs):
            if sender.name == self.name:
                cluster_seed_local(using=kwargs.get("using", "default"))

        post_migrate.connect(seed, dispatch_uid="clusters-seed-local")
