"""The protocol migration page: thin, over offsets.protocols.selectors."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest
from offsets.protocols.selectors import migration_overview


@require_GET
@role_required(Role.VIEWER)
def migration_page(request: HtmxHttpRequest, cluster: str):
    """Every group by type, and the groups still on the classic protocol with what stands in the way of their
    move; the moves seen so far. Asked of Kafka at each load: one listing, one describe, the brokers' configs and,
    with a JMX source, each broker's client software."""
    cluster_get(cluster)
    return render(request, "offsets/protocol_migration.html",
                  {"cluster": cluster, "overview": migration_overview(cluster)})
