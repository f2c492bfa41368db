"""A connector's offsets (KIP-875): the page, the preview of a change (a sink connector's strategy, offsets written
as JSON, or a reset), its execution, and the revert of an audited change, with the guarantees of a group reset."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from changes.actions.connectors import connector_target
from changes.guard import is_protected
from changes.proposals import proposed_response
from connect.forms import SINK_STRATEGIES, ExecuteForm, OffsetsChangeForm
from connect.connector_offsets import services
from connect.connector_offsets.asking import offsets_change_proposal
from connect.connector_offsets.preview import reset_offsets_preview, sink_offsets_preview, written_offsets_preview
from connect.connector_offsets.source_input import offsets_text
from connect.registration import connect_client, connect_cluster_get
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from gateway.kafka_connect.types import SINK
from console.http import HtmxHttpRequest, redirect_after_change, valid_data


def _preview(cluster: str, connect: str, name: str, form: OffsetsChangeForm):
    mode = form.cleaned_data["mode"]
    if mode == "reset":
        return reset_offsets_preview(cluster, connect, name)
    if mode == "json":
        return written_offsets_preview(cluster, connect, name, form.writes())
    return sink_offsets_preview(cluster, connect, name, form.scope(), form.strategy_value(cluster))


@require_GET
@role_required(Role.VIEWER)
def offsets_page(request: HtmxHttpRequest, cluster: str, connect: str, name: str):
    client = connect_client(connect_cluster_get(cluster, connect))
    info, status, offsets = client.connector(name), client.status(name), client.offsets(name)
    context = {"cluster": cluster, "connect": connect, "name": name, "info": info, "status": status,
               "offsets": offsets, "sink": info.type == SINK, "strategies": SINK_STRATEGIES,
               "json_text": offsets_text(list(offsets.entries))}
    return render(request, "connect/offsets.html", context)


@require_POST
@role_required(Role.OPERATOR)
def offsets_preview(request: HtmxHttpRequest, cluster: str, connect: str, name: str):
    """The dry run: every partition the change writes, before and after; nothing changes."""
    form = OffsetsChangeForm(request.POST)
    valid_data(form)
    preview = _preview(cluster, connect, name, form)
    context = {"cluster": cluster, "connect": connect, "name": name, "preview": preview,
               "carried": form.cleaned_data, "execute_form": ExecuteForm(initial={"fingerprint": preview.fingerprint}),
               "protected": is_protected(cluster, connector_target(connect, name)),
               "execute_url": reverse("connect:offsets-execute", args=[cluster, connect, name])}
    return render(request, "connect/_offsets_preview.html" if request.htmx else "connect/offsets_preview.html",
                  context)


@require_POST
@role_required(Role.OPERATOR)
def offsets_execute(request: HtmxHttpRequest, cluster: str, connect: str, name: str):
    """The change the preview showed, planned again now and refused if the offsets moved or the connector runs."""
    form = OffsetsChangeForm(request.POST)
    valid_data(form)
    execute = valid_data(ExecuteForm(request.POST))
    actor = Actor.from_request(request)
    reset = form.cleaned_data["mode"] == "reset"
    preview = reset_offsets_preview(cluster, connect, name) if reset else _preview(cluster, connect, name, form)
    change = offsets_change_proposal(actor=actor, cluster=cluster, preview=preview, reset=reset,
                                     reason=execute["reason"], confirm=execute["confirm"],
                                     expected_fingerprint=execute["fingerprint"])
    if change is not None:
        return proposed_response(request, change)
    if reset:
        services.connector_offsets_reset(actor=actor, cluster=cluster, connect=connect, name=name,
                                         reason=execute["reason"], confirm=execute["confirm"],
                                         expected_fingerprint=execute["fingerprint"])
        messages.success(request, f"Offsets of {name} reset. The audit log keeps them as they were.")
    else:
        services.connector_offsets_alter(actor=actor, cluster=cluster, preview=preview,
                                         reason=execute["reason"], confirm=execute["confirm"],
                                         expected_fingerprint=execute["fingerprint"])
        messages.success(request, f"Offsets of {name} changed. The audit log has them before and after.")
    return redirect_after_change(request, reverse("connect:offsets", args=[cluster, connect, name]))


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def offsets_revert(request: HtmxHttpRequest, cluster: str, seq: int):
    """GET: the preview of writing back audit event `seq`'s "before" exactly. POST: execute it."""
    event, preview = services.revert_preview(seq)
    connect, name = event.params["connect"], event.params["connector"]
    if request.method == "POST":
        execute = valid_data(ExecuteForm(request.POST))
        change = offsets_change_proposal(actor=Actor.from_request(request), cluster=event.cluster, preview=preview,
                                         reset=False, reason=execute["reason"], confirm=execute["confirm"],
                                         expected_fingerprint=execute["fingerprint"], revert_of=seq)
        if change is not None:
            return proposed_response(request, change)
        services.connector_offsets_revert(actor=Actor.from_request(request), seq=seq, reason=execute["reason"],
                                          confirm=execute["confirm"], expected_fingerprint=execute["fingerprint"])
        messages.success(request, f"Offsets of {name} are back to those before audit event #{seq}.")
        return redirect_after_change(request, reverse("connect:offsets", args=[event.cluster, connect, name]))
    context = {"cluster": event.cluster, "connect": connect, "name": name, "preview": preview, "event": event,
               "protected": is_protected(event.cluster, connector_target(connect, name)),
               "execute_form": ExecuteForm(initial={"fingerprint": preview.fingerprint}),
               "execute_url": reverse("connect:offsets-revert", args=[event.cluster, seq])}
    return render(request, "connect/offsets_revert.html", context)
