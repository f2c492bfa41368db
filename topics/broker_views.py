from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from replication.selectors import brokers_overview
from topics import forms, selectors, services
from gateway.kafka.types import BROKER

SHOW_CHANGED, SHOW_ALL = "changed", "all"
SHOW_CHOICES = (SHOW_CHANGED, SHOW_ALL)


@require_GET
@role_required(Role.VIEWER)
def broker_list(request: HtmxHttpRequest, cluster: str):
    overview = brokers_overview(cluster)
    return render(request, "topics/brokers.html", {"cluster": cluster, "overview": overview})


@require_GET
@role_required(Role.VIEWER)
def broker_detail(request: HtmxHttpRequest, cluster: str, broker_id: int):
    rows = selectors.broker_config_rows(cluster, broker_id)
    q = request.GET.get("q", "").strip().lower()
    # A broker has some 340 configs and most are Kafka's defaults: the page opens on those set for this broker or
    # cluster (server.properties, dynamic), which is what a person comes to check; all of them are one choice away.
    show = request.GET.get("show") if request.GET.get("show") in SHOW_CHOICES else SHOW_CHANGED
    shown = [r for r in rows if q in r.name and (show == SHOW_ALL or r.source != "default")]
    context = {"cluster": cluster, "broker_id": broker_id, "rows": shown, "total": len(rows), "q": q,
               "show": show, "config_form": forms.ConfigChangeForm()}
    return render(request, "topics/broker.html#broker-configs" if request.htmx else "topics/broker.html", context)


@require_POST
@role_required(Role.ADMIN)
def broker_config_preview(request: HtmxHttpRequest, cluster: str, broker_id: int):
    data = valid_data(forms.ConfigChangeForm(request.POST))
    changes = selectors.config_change_preview(cluster, BROKER, str(broker_id), set_values=data["set_values"],
                                              delete=data["delete"])
    context = {"changes": changes, "form_data": request.POST,
               "apply_url": reverse("brokers:config-apply", args=[cluster, broker_id])}
    return render(request, "topics/_config_preview.html", context)


@require_POST
@role_required(Role.ADMIN)
def broker_config_apply(request: HtmxHttpRequest, cluster: str, broker_id: int):
    data = valid_data(forms.ConfigChangeForm(request.POST))
    services.broker_configs_alter(actor=Actor.from_request(request), cluster=cluster, broker_id=broker_id,
                                  set_values=data["set_values"], delete=data["delete"], reason=data["reason"])
    messages.success(request, f"Configs of broker {broker_id} changed.")
    return redirect_after_change(request, reverse("brokers:detail", args=[cluster, broker_id]))
