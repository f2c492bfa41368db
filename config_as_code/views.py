"""The drift page: what differs between a cluster and the configuration file last applied to it (admins: the file
names masking rules and SCRAM users), and the cluster's configuration to download."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from config_as_code.document import dump_document
from config_as_code.selectors import applied_configs, cluster_config, config_drift
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest, safe_filename


@require_GET
@role_required(Role.ADMIN)
def drift(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    found = config_drift(cluster)
    changes = found.plan.changes if found.plan else ()
    return render(request, "config_as_code/drift.html", {
        "cluster": cluster, "drift": found, "changes": changes, "history": applied_configs(cluster)})


@require_GET
@role_required(Role.ADMIN)
def export(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    response = HttpResponse(dump_document(cluster_config(cluster)), content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{safe_filename(cluster)}-config.yaml"'
    return response
