"""The masking rules of a cluster: admins list, add and delete them."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from masking import selectors, services
from masking.conf import hash_key
from masking.forms import MaskRuleForm


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def mask_rules(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    form = MaskRuleForm(request.POST or None)
    if request.method == "POST":
        data = valid_data(form)
        rule = services.mask_rule_create(
            actor=Actor.from_request(request), cluster=cluster, topic_pattern=data["topic_pattern"],
            selector=data["selector"], target=data["target"], action=data["action"],
            replacement=data["replacement"], keep_last=data["keep_last"], roles=data["roles"],
            reason=data["reason"])
        messages.success(request, f"Masking rule #{rule.pk} added; it applies from the next read on.")
        return redirect_after_change(request, reverse("masking:rules", args=[cluster]))
    return render(request, "masking/rules.html", {"cluster": cluster, "form": form,
                                                  "rules": selectors.mask_rule_list(cluster),
                                                  "has_hash_key": hash_key() is not None})


@require_POST
@role_required(Role.ADMIN)
def mask_rule_delete(request: HtmxHttpRequest, cluster: str, rule_id: int):
    services.mask_rule_delete(actor=Actor.from_request(request), cluster=cluster, rule_id=rule_id,
                              reason=request.POST.get("reason", ""))
    messages.success(request, f"Masking rule #{rule_id} deleted.")
    return redirect_after_change(request, reverse("masking:rules", args=[cluster]))
