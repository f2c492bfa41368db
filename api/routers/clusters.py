"""Clusters and brokers: `manage.py clusters list` and `replication brokers`."""

from __future__ import annotations

from ninja import Router

from api.access import allow, call_of
from api.schemas import PROBLEMS
from console.clusters.models import Cluster
from console.clusters.selectors import clusters_health, clusters_json
from replication.selectors import brokers_overview
from replication.serializers import brokers_json

router = Router(tags=["clusters"])


@router.get("/clusters", response={200: list[dict], **PROBLEMS}, summary="List clusters")
def cluster_list(request):
    """`manage.py clusters list --format json`: each cluster the token reaches, with its reachability, broker count
    and controller."""
    allow(request)
    token = call_of(request).token
    return clusters_json(clusters_health([c for c in Cluster.objects.all() if token.reaches(c.name)]))


@router.get("/clusters/{cluster}/brokers", response={200: dict, **PROBLEMS}, summary="List brokers")
def broker_list(request, cluster: str):
    """`manage.py replication brokers --format json`: every broker, up or down, its rack, replicas and leaders."""
    allow(request, cluster=cluster)
    return brokers_json(brokers_overview(cluster))
