"""Leaders and replica placement of a cluster: leaders that are not preferred and their election, reassignments
in progress with their progress, and starting (previewed, throttled), cancelling or finishing one. Admin only
for changes."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from replication import selectors, services
from replication.forms import ElectForm, ReassignForm, TopicActionForm


@require_GET
@role_required(Role.VIEWER)
def replication_overview(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    moving = sorted({r.ref.topic for r in selectors.reassignments(cluster)})
    context = {"cluster": cluster, "not_preferred": selectors.leaders_not_preferred(cluster),
               "moving": [{"topic": t, "rows": selectors.reassignment_progress(cluster, t)} for t in moving],
               "elect": ElectForm(), "reassign": ReassignForm()}
    return render(request, "replication/overview.html", context)


@require_POST
@role_required(Role.ADMIN)
def leaders_elect(request: HtmxHttpRequest, cluster: str):
    data = valid_data(ElectForm(request.POST))
    after = services.leaders_elect(actor=Actor.from_request(request), cluster=cluster,
                                   topics=[data["topic"]] if data["topic"] else None, reason=data["reason"])
    messages.success(request, f"Preferred leaders elected for {len(after)} partition{'s' if len(after) != 1 else ''}.")
    return redirect_after_change(request, reverse("replication:overview", args=[cluster]))


def _targets(cluster: str, data: dict) -> dict[int, tuple[int, ...]]:
    return services.reassignment_targets(cluster=cluster, topic=data["topic"], assignment=data["assignment"],
                                         replication_factor=data["replication_factor"])


@require_POST
@role_required(Role.ADMIN)
def reassign_preview(request: HtmxHttpRequest, cluster: str):
    data = valid_data(ReassignForm(request.POST))
    moves = services.reassignment_preview(cluster=cluster, topic=data["topic"], targets=_targets(cluster, data))
    assignment = ";".join(f"{m.partition}={','.join(map(str, m.target))}" for m in moves)
    return render(request, "replication/_reassign_preview.html",
                  {"cluster": cluster, "topic": data["topic"], "moves": moves, "assignment": assignment,
                   "throttle": data["throttle"]})


@require_POST
@role_required(Role.ADMIN)
def reassign_start(request: HtmxHttpRequest, cluster: str):
    data = valid_data(ReassignForm(request.POST))
    moves = services.reassignment_start(actor=Actor.from_request(request), cluster=cluster, topic=data["topic"],
                                        targets=_targets(cluster, data), throttle=data["throttle"],
                                        reason=data["reason"])
    messages.success(request, f"Moving {len(moves)} partition{'s' if len(moves) != 1 else ''} of {data['topic']}.")
    return redirect_after_change(request, reverse("replication:overview", args=[cluster]))


@require_POST
@role_required(Role.ADMIN)
def reassign_cancel(request: HtmxHttpRequest, cluster: str):
    data = valid_data(TopicActionForm(request.POST))
    services.reassignment_cancel(actor=Actor.from_request(request), cluster=cluster, topic=data["topic"],
                                 reason=data["reason"])
    messages.success(request, f"Reassignment of {data['topic']} cancelled and its throttle removed.")
    return redirect_after_change(request, reverse("replication:overview", args=[cluster]))


@require_POST
@role_required(Role.ADMIN)
def reassign_finish(request: HtmxHttpRequest, cluster: str):
    data = valid_data(TopicActionForm(request.POST))
    services.reassignment_finish(actor=Actor.from_request(request), cluster=cluster, topic=data["topic"],
                                 reason=data["reason"] or "reassignment complete")
    messages.success(request, f"Throttle of {data['topic']} removed.")
    return redirect_after_change(request, reverse("replication:overview", args=[cluster]))
