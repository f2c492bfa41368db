"""The alerts page: rules, open and recent alerts, silences. Everyone with a role sees them; operators change them."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from alerts import selectors, services
from alerts.channels import webhook_channels
from alerts.forms import AlertRuleForm, SilenceForm
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.http import HtmxHttpRequest, redirect_after_change, valid_data


@require_GET
@role_required(Role.VIEWER)
def alerts_page(request: HtmxHttpRequest):
    context = {"rules": selectors.rules_list(), "open": selectors.alerts_open(),
               "resolved": selectors.alerts_recent_resolved(), "silences": selectors.silences_active(),
               "rule_form": AlertRuleForm(), "silence_form": SilenceForm(), "webhooks": sorted(webhook_channels())}
    return render(request, "alerts/page.html", context)


@require_POST
@role_required(Role.OPERATOR)
def rule_create(request: HtmxHttpRequest):
    form = AlertRuleForm(request.POST)
    data = valid_data(form)
    services.alert_rule_create(
        actor=Actor.from_request(request), name=data["name"], kind=data["kind"], cluster=data["cluster"].strip(),
        group_pattern=data["group_pattern"].strip() or "*", statuses=data["statuses"], for_minutes=data["for_minutes"],
        threshold=data["threshold"], window_minutes=data["window_minutes"], webhook=data["webhook"].strip(),
        emails=form.email_list(), reason=data["reason"])
    messages.success(request, f"Alert rule {data['name']} added.")
    return redirect_after_change(request, reverse("alerts:page"))


@require_POST
@role_required(Role.OPERATOR)
def rule_remove(request: HtmxHttpRequest, name: str):
    services.alert_rule_remove(actor=Actor.from_request(request), name=name, reason=request.POST.get("reason", ""))
    messages.success(request, f"Alert rule {name} removed.")
    return redirect_after_change(request, reverse("alerts:page"))


@require_POST
@role_required(Role.OPERATOR)
def silence_create(request: HtmxHttpRequest):
    form = SilenceForm(request.POST)
    data = valid_data(form)
    silence = services.alert_silence_create(
        actor=Actor.from_request(request), ends_at=form.ends_at(), reason=data["reason"], rule=data["rule"].strip(),
        cluster=data["cluster"].strip(), group_pattern=data["group_pattern"].strip() or "*")
    messages.success(request, f"Silenced until {silence.ends_at:%Y-%m-%d %H:%M} UTC.")
    return redirect_after_change(request, reverse("alerts:page"))


@require_POST
@role_required(Role.OPERATOR)
def silence_end(request: HtmxHttpRequest, silence_id: int):
    services.alert_silence_end(actor=Actor.from_request(request), silence_id=silence_id,
                               reason=request.POST.get("reason", ""))
    messages.success(request, "Silence ended.")
    return redirect_after_change(request, reverse("alerts:page"))
