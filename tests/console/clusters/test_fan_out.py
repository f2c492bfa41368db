import pytest

from console.clusters.fan_out import task_per_cluster
from console.clusters.models import Cluster

pytestmark = pytest.mark.django_db


class Recorder:
    """Stands for a Celery task: what was queued, with its expiry (the queueing itself is Celery's)."""

    def __init__(self):
        self.queued = []

    def apply_async(self, args, expires):
        self.queued.append((args, expires))


def test_one_task_per_registered_cluster_each_with_its_expiry():
    Cluster.objects.create(name="b-east", bootstrap_servers="127.0.0.1:1")
    Cluster.objects.create(name="a-west", bootstrap_servers="127.0.0.1:2")
    task = Recorder()
    names = task_per_cluster(task, expires_s=15.0)
    assert names == sorted(Cluster.objects.values_list("name", flat=True))
    assert task.queued == [((name,), 15.0) for name in names]
