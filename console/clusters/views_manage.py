"""Register, edit and remove clusters in the browser (admin); the same services as `manage.py clusters`."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters import services
from console.clusters.dependents import cluster_data_counts
from console.clusters.forms import ClusterForm, ClusterRemoveForm
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from console.parsing import format_pairs


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def cluster_new(request: HtmxHttpRequest):
    form = ClusterForm(request.POST or None)
    if request.method == "POST":
        data = valid_data(form)
        if services.cluster_exists(data["name"]):
            raise ConsoleError(services.MSG_NAME_TAKEN.format(name=data["name"]))
        return _save(request, data, created=True)
    return render(request, "clusters/form.html", {"form": form, "editing": None})


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def cluster_edit(request: HtmxHttpRequest, cluster: str):
    registration = cluster_get(cluster)
    initial = {"name": registration.name, "bootstrap_servers": registration.bootstrap_servers,
               "client_config": format_pairs(registration.client_config),
               "secret_env": format_pairs(registration.secret_env), "description": registration.description,
               "schema_registry_url": registration.schema_registry_url}
    form = ClusterForm(request.POST or None, initial=initial)
    form.fields["name"].disabled = True  # renaming would orphan its history; register anew instead
    if request.method == "POST":
        return _save(request, valid_data(form), created=False)
    return render(request, "clusters/form.html", {"form": form, "editing": registration})


def _save(request: HtmxHttpRequest, data: dict, *, created: bool):
    cluster = services.cluster_register(
        actor=Actor.from_request(request), name=data["name"], bootstrap_servers=data["bootstrap_servers"],
        client_config=data["client_config"], secret_env=data["secret_env"], description=data["description"],
        schema_registry_url=data["schema_registry_url"], reason=data["reason"])
    messages.success(request, f"Cluster {cluster.name} {'registered' if created else 'updated'}; every process "
                              f"uses the new settings from its next request.")
    return redirect_after_change(request, reverse("clusters:list"))


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def cluster_remove(request: HtmxHttpRequest, cluster: str):
    registration = cluster_get(cluster)
    form = ClusterRemoveForm(request.POST or None)
    if request.method == "POST":
        data = valid_data(form)
        if data["confirm"] != registration.name:
            raise ConsoleError(services.MSG_CONFIRM_NAME)
        deleted = services.cluster_remove(actor=Actor.from_request(request), name=cluster, reason=data["reason"])
        messages.success(request, f"Cluster {cluster} removed; deleted {sum(deleted.values())} rows the console "
                                  f"kept about it.")
        return redirect_after_change(request, reverse("clusters:list"))
    return render(request, "clusters/remove.html", {
        "cluster": registration, "form": form, "counts": cluster_data_counts(cluster), "keeps": services.MSG_REMOVAL_KEEPS})
