"""Clusters and brokers: `manage.py clusters list`, `replication brokers`, and a broker's log directories
(`brokers log-dirs`, `cordon`, `uncordon`)."""

from __future__ import annotations

from ninja import Router, Schema
from pydantic import Field

from api.access import allow, call_of
from api.schemas import PROBLEMS
from brokers import services as broker_services
from brokers.log_dirs import broker_log_dirs
from brokers.serializers import log_dirs_json
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.audit.guarded import MSG_REASON
from console.clusters.models import Cluster
from console.errors import ConsoleError
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


@router.get("/clusters/{cluster}/brokers/{broker_id}/log-dirs", response={200: dict, **PROBLEMS},
            summary="A broker's log directories")
def broker_log_dir_list(request, cluster: str, broker_id: int):
    """`manage.py brokers log-dirs --format json`: each directory, cordoned or not (Kafka 4.3), its replicas and
    bytes, and the broker's cordoned.log.dirs."""
    allow(request, cluster=cluster)
    return log_dirs_json(broker_log_dirs(cluster, broker_id))


class LogDirsChange(Schema):
    log_dirs: list[str] = Field(min_length=1, description="directories of the broker's log.dirs, or [\"*\"] for all")
    dry_run: bool = Field(False, description="only the preview, as the command prints it without --yes")
    reason: str = Field("", max_length=2000, description="why (unless dry_run): it goes into the audit log")


def _log_dirs_change(request, cluster: str, broker_id: int, body: LogDirsChange, *, cordon: bool) -> dict:
    allow(request, role=Role.ADMIN, cluster=cluster, write=not body.dry_run)
    if body.dry_run:
        return {**broker_services.log_dirs_preview(cluster=cluster, broker_id=broker_id, log_dirs=body.log_dirs,
                                                   cordon=cordon).as_dict(), "preview": True}
    if not body.reason.strip():
        raise ConsoleError(MSG_REASON, field="reason")
    change = broker_services.broker_log_dir_cordon if cordon else broker_services.broker_log_dir_uncordon
    return change(actor=Actor.from_request(request), cluster=cluster, broker_id=broker_id, log_dirs=body.log_dirs,
                  reason=body.reason)


@router.post("/clusters/{cluster}/brokers/{broker_id}/log-dirs/cordon", response={200: dict, **PROBLEMS},
             summary="Cordon log directories of a broker")
def broker_log_dirs_cordon(request, cluster: str, broker_id: int, body: LogDirsChange):
    """`manage.py brokers cordon --format json` (admin): no new replica goes to these directories; audited."""
    return _log_dirs_change(request, cluster, broker_id, body, cordon=True)


@router.post("/clusters/{cluster}/brokers/{broker_id}/log-dirs/uncordon", response={200: dict, **PROBLEMS},
             summary="Uncordon log directories of a broker")
def broker_log_dirs_uncordon(request, cluster: str, broker_id: int, body: LogDirsChange):
    """`manage.py brokers uncordon --format json` (admin): new replicas may go to these directories again."""
    return _log_dirs_change(request, cluster, broker_id, body, cordon=False)
