"""The connectors of every Connect cluster beside a Kafka cluster, filterable and sortable, and bulk actions on
what a filter selects (one preview, then each connector's own audited change)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from connect import services
from connect.selectors import SORTS, connectors_overview
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from gateway.kafka_connect.types import STATES
from console.errors import ConsoleError
from console.http import HtmxHttpRequest, redirect_after_change

MSG_NOTHING_CHOSEN = "No connector is chosen: the filter selected none."


def _filters(data) -> dict:
    return {"query": data.get("q", ""), "state": data.get("state", ""), "type": data.get("type", ""),
            "connect": data.get("connect", ""), "sort": data.get("sort", "") or "name"}


def _pair(value: str) -> tuple[str, str] | None:
    try:
        connect, name = json.loads(value)
    except (ValueError, TypeError):
        return None
    return (connect, name) if isinstance(connect, str) and isinstance(name, str) else None


@require_GET
@role_required(Role.VIEWER)
def connector_list(request: HtmxHttpRequest, cluster: str):
    """One request per Connect cluster (every one asked at once, each bounded), then topics per connector."""
    cluster_get(cluster)
    filters = _filters(request.GET)
    page = connectors_overview(cluster, **filters)
    query = request.GET.copy()
    context = {"cluster": cluster, "page": page, "filters": filters, "states": STATES, "sorts": SORTS,
               "query": query.urlencode(), "actions": services.ACTIONS}
    return render(request, "connect/list.html#connector-table" if request.htmx else "connect/list.html", context)


@require_POST
@role_required(Role.OPERATOR)
def connectors_bulk(request: HtmxHttpRequest, cluster: str):
    """step=preview: the connectors the filter selects now, with their states; step=execute: the action on the
    connectors that preview listed (carried as `chosen`), each audited."""
    action = request.POST.get("action", "")
    if action not in services.ACTIONS:
        raise ConsoleError(services.MSG_ACTION)
    if request.POST.get("step") != "execute":
        page = connectors_overview(cluster, **_filters(request.POST))
        if not page.rows:
            raise ConsoleError(MSG_NOTHING_CHOSEN)
        rows = [(row, json.dumps([row.connect, row.name])) for row in page.rows]
        context = {"cluster": cluster, "action": action, "rows": rows, "problems": page.problems,
                   "filters": _filters(request.POST)}
        return render(request, "connect/bulk.html", context)
    chosen = [pair for pair in map(_pair, request.POST.getlist("chosen")) if pair is not None]
    if not chosen:
        raise ConsoleError(MSG_NOTHING_CHOSEN)
    outcomes = services.connectors_bulk(actor=Actor.from_request(request), cluster=cluster, action=action,
                                        chosen=chosen, reason=request.POST.get("reason", ""))
    failed = [o for o in outcomes if o.error]
    done = len(outcomes) - len(failed)
    messages.success(request, f"{action.capitalize()}: {done} of {len(outcomes)} connector(s) done.")
    for outcome in failed:
        messages.error(request, f"{outcome.connect}/{outcome.name}: {outcome.error}")
    return redirect_after_change(request, reverse("connect:list", args=[cluster]))
