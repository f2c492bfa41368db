"""Register, edit and remove the Connect clusters beside a Kafka cluster (admin), as `manage.py connect register`."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from connect.forms import RegistrationForm
from connect.registration import connect_cluster_get, connect_cluster_register, connect_cluster_remove
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.http import HtmxHttpRequest, redirect_after_change, valid_data

_FIELDS = ("url", "username", "password_env", "ca_file", "cert_file", "key_file", "description", "operator_plugins",
           "operator_settings", "file_dirs")


def _save(request: HtmxHttpRequest, cluster: str, data: dict, *, create: bool):
    registration = connect_cluster_register(actor=Actor.from_request(request), cluster=cluster, name=data["name"],
                                            reason=data["reason"], create=create,
                                            **{field: data[field] for field in _FIELDS})
    messages.success(request, f"Connect cluster {registration.name} {'registered' if create else 'updated'}.")
    return redirect_after_change(request, reverse("connect:list", args=[cluster]))


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def registration_new(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    form = RegistrationForm(request.POST or None)
    if request.method == "POST":
        return _save(request, cluster, valid_data(form), create=True)
    return render(request, "connect/registration.html", {"cluster": cluster, "form": form, "editing": None})


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def registration_edit(request: HtmxHttpRequest, cluster: str, connect: str):
    registration = connect_cluster_get(cluster, connect)
    initial = {"name": registration.name, **{field: getattr(registration, field) for field in _FIELDS}}
    form = RegistrationForm(request.POST or None, initial=initial)
    form.fields["name"].disabled = True
    if request.method == "POST":
        return _save(request, cluster, valid_data(form), create=False)
    return render(request, "connect/registration.html", {"cluster": cluster, "form": form, "editing": registration})


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def registration_remove(request: HtmxHttpRequest, cluster: str, connect: str):
    registration = connect_cluster_get(cluster, connect)
    if request.method == "POST":
        if request.POST.get("confirm", "") != registration.name:
            raise ConsoleError("Type the Connect cluster's name to confirm.")
        connect_cluster_remove(actor=Actor.from_request(request), cluster=cluster, name=connect,
                               reason=request.POST.get("reason", ""))
        messages.success(request, f"Connect cluster {connect} unregistered; Connect itself was not touched.")
        return redirect_after_change(request, reverse("connect:list", args=[cluster]))
    return render(request, "connect/registration_remove.html", {"cluster": cluster, "registration": registration})
