"""Change requests: the list (pending ones with their age), a request's page (plan, reason, requester, approvals,
the audit trail) with approve, reject and break-glass; and a cluster's protection (admins)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from changes import selectors, services, states
from changes.actions import action_named
from changes.forms import DecisionForm, ProtectionForm, ReasonForm
from console.accounts.decorators import role_required
from console.accounts.roles import Role, has_role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest, redirect_after_change, valid_data

STATUS_FILTERS = ("pending", "all", *[s for s in states.STATUSES if s != states.PENDING])


@require_GET
@role_required(Role.VIEWER)
def change_list(request: HtmxHttpRequest):
    status = request.GET.get("status", "pending")
    status = status if status in STATUS_FILTERS else "pending"
    rows = selectors.change_requests(status="" if status == "all" else status)
    now = timezone.now()
    context = {"rows": [(c, selectors.status_now(c), now - c.requested_at) for c in rows], "status": status,
               "filters": STATUS_FILTERS}
    return render(request, "changes/list.html#change-table" if request.htmx else "changes/list.html", context)


@require_GET
@role_required(Role.VIEWER)
def change_detail(request: HtmxHttpRequest, request_id: int):
    change = services.change_request_get(request_id)
    spec = action_named(change.action)
    status = selectors.status_now(change)
    user = request.user
    pending = status == states.PENDING
    approved_by = {a.user_id for a in change.approvals.all()}
    context = {
        "change": change, "spec": spec, "status": status, "age": timezone.now() - change.requested_at,
        "approvals": list(change.approvals.all()), "trail": selectors.change_audit_trail(change),
        "own": user.pk == change.requested_by_id,
        "can_approve": pending and has_role(user, spec.role) and user.pk != change.requested_by_id
        and user.pk not in approved_by,
        "can_reject": pending and (has_role(user, spec.role) or user.pk == change.requested_by_id),
        "can_break_glass": pending and has_role(user, Role.ADMIN),
    }
    return render(request, "changes/detail.html", context)


@require_POST
@role_required(Role.OPERATOR)
def change_approve(request: HtmxHttpRequest, request_id: int):
    data = valid_data(DecisionForm(request.POST))
    change = services.change_request_approve(actor=Actor.from_request(request), request_id=request_id,
                                             reason=data["reason"])
    if change.status == states.EXECUTED:
        messages.success(request, f"Change request #{change.pk} approved and executed.")
    else:
        messages.success(request, f"Change request #{change.pk} approved; it needs "
                                  f"{change.approvals_required - change.approvals.count()} more approval(s).")
    return redirect_after_change(request, reverse("changes:detail", args=[change.pk]))


@require_POST
@role_required(Role.OPERATOR)
def change_reject(request: HtmxHttpRequest, request_id: int):
    data = valid_data(ReasonForm(request.POST))
    change = services.change_request_reject(actor=Actor.from_request(request), request_id=request_id,
                                            reason=data["reason"])
    messages.success(request, f"Change request #{change.pk} rejected: nothing was changed.")
    return redirect_after_change(request, reverse("changes:detail", args=[change.pk]))


@require_POST
@role_required(Role.ADMIN)
def change_break_glass(request: HtmxHttpRequest, request_id: int):
    data = valid_data(ReasonForm(request.POST))
    change = services.change_request_break_glass(actor=Actor.from_request(request), request_id=request_id,
                                                 reason=data["reason"])
    messages.success(request, f"Break-glass: change request #{change.pk} executed without approval. This is "
                              f"audited and was sent to the protection's channel.")
    return redirect_after_change(request, reverse("changes:detail", args=[change.pk]))


def _initial(protection) -> dict:
    if protection is None:
        return {"whole_cluster": True}
    return {"whole_cluster": protection.whole_cluster, "topic_patterns": "\n".join(protection.topic_patterns),
            "group_patterns": "\n".join(protection.group_patterns), "approvals": protection.approvals,
            "webhook": protection.webhook}


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def protection_edit(request: HtmxHttpRequest, cluster: str):
    """The cluster's protection, shown on its settings page (a partial) or on its own."""
    cluster_get(cluster)
    protection = selectors.protection_of(cluster)
    if request.method == "POST":
        form = ProtectionForm(request.POST)
        data = valid_data(form)
        services.protection_set(actor=Actor.from_request(request), cluster=cluster,
                                whole_cluster=data["whole_cluster"], topic_patterns=form.patterns("topic_patterns"),
                                group_patterns=form.patterns("group_patterns"), approvals=data["approvals"],
                                webhook=data["webhook"], reason=data["reason"])
        messages.success(request, f"Cluster {cluster} is protected: its changes need a second person.")
        return redirect_after_change(request, reverse("clusters:edit", args=[cluster]))
    context = {"cluster": cluster, "protection": protection, "form": ProtectionForm(initial=_initial(protection)),
               "clear_form": ReasonForm()}
    template = "changes/protection.html#protection-card" if request.htmx else "changes/protection.html"
    return render(request, template, context)


@require_POST
@role_required(Role.ADMIN)
def protection_remove(request: HtmxHttpRequest, cluster: str):
    data = valid_data(ReasonForm(request.POST))
    services.protection_clear(actor=Actor.from_request(request), cluster=cluster, reason=data["reason"])
    messages.success(request, f"Cluster {cluster} is no longer protected: changes run directly again.")
    return redirect_after_change(request, reverse("clusters:edit", args=[cluster]))
