from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.models import AuditEvent
from console.clusters.dashboard import dashboard_panels
from console.clusters.local_processes import local_broker_failure
from console.clusters.selectors import cluster_admin, cluster_get, clusters_health
from console.clusters.status import cluster_status_lines
from console.errors import ConsoleError, error_status
from console.http import HtmxHttpRequest
from gateway.kafka.errors import KafkaGatewayError


@require_GET
@role_required(Role.VIEWER)
def cluster_list(request: HtmxHttpRequest):
    health = clusters_health()
    context = {"clusters": [(h, cluster_status_lines(h.name)) for h in health]}
    template = "clusters/list.html#cluster-table" if request.htmx else "clusters/list.html"
    return render(request, template, context)


@require_GET
@role_required(Role.VIEWER)
def cluster_detail(request: HtmxHttpRequest, cluster: str):
    """The cluster's dashboard: its brokers, then each app's panel (topics, groups, Connect, alerts), the last
    changes made to it, and its registration."""
    registration = cluster_get(cluster)
    description, error, status = None, "", 200
    try:
        description = cluster_admin(registration).describe_cluster()
    except (KafkaGatewayError, ConsoleError) as exc:  # the registration is still worth seeing, and editing
        if request.htmx:
            raise  # the error partial, where errors go
        error, status = local_broker_failure(registration.name) or exc.message, error_status(exc)
    panels = dashboard_panels(cluster) if description is not None else []
    changes = (AuditEvent.objects.filter(cluster=cluster).exclude(outcome=AuditEvent.Outcome.INTENT)
               .order_by("-seq")[:8])
    return render(request, "clusters/detail.html", {
        "cluster": registration, "description": description, "error": error, "panels": panels,
        "changes": changes, "status_lines": cluster_status_lines(cluster)}, status=status)
