"""Transactions of a cluster: every transactional id with its state, one id's partitions, the search for hanging
transactions and their abort (admin: previewed, confirmed by the producer id, audited)."""

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
from transactions import selectors, services
from transactions.forms import AbortForm, HangingSearchForm


@require_GET
@role_required(Role.VIEWER)
def transaction_list(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    rows = selectors.transactions_overview(cluster)
    ongoing = [r for r in rows if r.listing.state == "Ongoing"]
    context = {"cluster": cluster, "rows": rows, "ongoing": len(ongoing), "search": HangingSearchForm()}
    return render(request, "transactions/list.html", context)


@require_GET
@role_required(Role.VIEWER)
def transaction_detail(request: HtmxHttpRequest, cluster: str, transactional_id: str):
    cluster_get(cluster)
    info = selectors.transaction_describe(cluster, transactional_id)
    open_for = None if info.start_time_ms is None else max(0, selectors.now_ms() - info.start_time_ms)
    return render(request, "transactions/detail.html", {"cluster": cluster, "info": info, "open_for_ms": open_for})


@require_GET
@role_required(Role.VIEWER)
def transaction_hanging(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    data = valid_data(HangingSearchForm(request.GET))
    at = selectors.now_ms()
    found = selectors.find_hanging(cluster, topic=data["topic"] or None, partition=data["partition"],
                                   broker=data["broker"], max_timeout_minutes=data["max_timeout"], at_ms=at)
    rows = [{"hanging": h, "minutes": h.duration_ms(at) // 60_000} for h in found]
    return render(request, "transactions/_hanging.html",
                  {"cluster": cluster, "rows": rows, "max_timeout": data["max_timeout"], "searched": data})


@require_POST
@role_required(Role.ADMIN)
def transaction_abort_preview(request: HtmxHttpRequest, cluster: str):
    data = valid_data(AbortForm(request.POST))
    preview = services.transaction_abort_preview(cluster=cluster, topic=data["topic"], partition=data["partition"],
                                                 start_offset=data["start_offset"],
                                                 max_timeout_minutes=data["max_timeout"])
    return render(request, "transactions/_abort_preview.html",
                  {"cluster": cluster, "preview": preview, "max_timeout": data["max_timeout"]})


@require_POST
@role_required(Role.ADMIN)
def transaction_abort(request: HtmxHttpRequest, cluster: str):
    data = valid_data(AbortForm(request.POST))
    after = services.transaction_abort(actor=Actor.from_request(request), cluster=cluster, topic=data["topic"],
                                       partition=data["partition"], start_offset=data["start_offset"],
                                       confirm=data["confirm"], reason=data["reason"],
                                       max_timeout_minutes=data["max_timeout"])
    messages.success(request, f"Transaction aborted on {data['topic']}-{data['partition']}: the last stable offset "
                              f"is now {after['last_stable_offset']}.")
    return redirect_after_change(request, reverse("transactions:list", args=[cluster]))
