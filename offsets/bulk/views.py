"""Bulk group pages: pick groups of any type with the groups list's filter, preview every change, confirm with a
typed phrase. Resets need the operator role, deletes the admin role (as on a group's own page)."""

from __future__ import annotations

import json

from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.accounts.decorators import role_required
from console.accounts.roles import Role, require_role
from console.audit.actor import Actor
from console.bulk import max_objects
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest, valid_data
from offsets import selectors
from offsets.bulk.forms import GroupBulkExecuteForm, GroupBulkForm
from offsets.bulk.planning import RESET
from offsets.bulk.services import groups_bulk_execute, groups_bulk_preview
from offsets.group_table import filter_entries
from offsets.resets.strategy_input import scope_from, strategy_from

def _action_args(cluster: str, data: dict) -> dict:
    """The reset's scope and strategy read as the shell reads them (offsets/resets/strategy_input.py)."""
    if data["action"] != RESET:
        return {"action": data["action"], "topic": data["topic"].strip()}
    scope = scope_from(data["all_topics"], data["topics"].split())
    return {"action": RESET, "scope": scope,
            "strategy": strategy_from(cluster, data["strategy"] or "to-earliest", data["value"] or None)}


def _role_for(action: str) -> Role:
    return Role.OPERATOR if action == RESET else Role.ADMIN


@require_GET
@role_required(Role.OPERATOR)
def bulk_groups(request: HtmxHttpRequest, cluster: str):
    """The groups the filter matches, from the shared groups list (no Kafka call per group)."""
    cluster_get(cluster)
    query, state = request.GET.get("q", "").strip(), request.GET.get("state", "")
    context = {"cluster": cluster, "q": query, "state": state, "form": GroupBulkForm(), "limit": max_objects()}
    snapshot = selectors.group_table_snapshot(cluster)
    if snapshot is None:
        context["building"] = True
    elif query or state:
        rows = filter_entries(snapshot.rows, query=query, state=state)
        context.update(rows=rows[:max_objects()], matched=len(rows))
    template = "bulk/groups.html#selection" if request.htmx else "bulk/groups.html"
    return render(request, template, context)


@require_POST
@role_required(Role.OPERATOR)
def bulk_groups_preview(request: HtmxHttpRequest, cluster: str):
    data = valid_data(GroupBulkForm(request.POST))
    require_role(request.user, _role_for(data["action"]))
    plan = groups_bulk_preview(cluster=cluster, names=request.POST.getlist("group"), **_action_args(cluster, data))
    context = {"cluster": cluster, "plan": plan, "form_data": request.POST,
               "fingerprints_json": json.dumps({c.group: c.fingerprint for c in plan.to_change if c.fingerprint}),
               "execute_url": reverse("bulk-groups:execute", args=[cluster])}
    return render(request, "bulk/_groups_preview.html", context)


@require_POST
@role_required(Role.OPERATOR)
def bulk_groups_execute(request: HtmxHttpRequest, cluster: str):
    data = valid_data(GroupBulkExecuteForm(request.POST))
    require_role(request.user, _role_for(data["action"]))
    outcome = groups_bulk_execute(actor=Actor.from_request(request), cluster=cluster,
                                  names=request.POST.getlist("group"), confirm=data["confirm"], reason=data["reason"],
                                  fingerprints=data["fingerprints"] or {}, **_action_args(cluster, data))
    return render(request, "bulk/_result.html", {"cluster": cluster, "outcome": outcome, "noun": "group"})
