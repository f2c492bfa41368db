"""Topic policy pages: the cluster's policies (admins edit them) and the report of the topics that break them."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.accounts.decorators import role_required
from console.accounts.roles import Role, has_role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.errors import NotFound
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from topics import selectors as topic_selectors
from topics.models import TopicPolicy
from topics.policies import selectors, services
from topics.policies.forms import PolicyDeleteForm, TopicPolicyForm

MSG_TABLE_BUILDING = ("The topic list of {cluster} is being built in the background; the report fills in by itself "
                      "when it is ready.")


def _values(data: dict) -> dict:
    return {key: value for key, value in data.items() if key not in ("name", "reason")}


@require_GET
@role_required(Role.VIEWER)
def policy_list(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    rows = selectors.policy_rows(cluster)
    context = {"cluster": cluster, "policies": [(row, selectors.policy_from_row(row)) for row in rows],
               "form": TopicPolicyForm() if has_role(request.user, Role.ADMIN) else None}
    return render(request, "topics/policies/list.html", context)


@require_POST
@role_required(Role.ADMIN)
def policy_create(request: HtmxHttpRequest, cluster: str):
    data = valid_data(TopicPolicyForm(request.POST))
    services.topic_policy_save(actor=Actor.from_request(request), cluster=cluster, name=data["name"],
                               values=_values(data), reason=data["reason"])
    messages.success(request, f"Policy {data['name'].strip()} saved.")
    return redirect_after_change(request, reverse("topic-policies:list", args=[cluster]))


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def policy_edit(request: HtmxHttpRequest, cluster: str, name: str):
    cluster_get(cluster)
    row = TopicPolicy.objects.filter(cluster=cluster, name=name).first()
    if row is None:
        raise NotFound(services.MSG_NO_POLICY.format(cluster=cluster, name=name))
    if request.method == "POST":
        data = valid_data(TopicPolicyForm(request.POST))
        services.topic_policy_save(actor=Actor.from_request(request), cluster=cluster, name=name,
                                   values=_values(data), reason=data["reason"], create=False)
        messages.success(request, f"Policy {name} saved.")
        return redirect_after_change(request, reverse("topic-policies:list", args=[cluster]))
    form = TopicPolicyForm(initial=TopicPolicyForm.initial_for(row))
    form.fields["name"].disabled = True
    return render(request, "topics/policies/edit.html", {"cluster": cluster, "name": name, "form": form})


@require_POST
@role_required(Role.ADMIN)
def policy_delete(request: HtmxHttpRequest, cluster: str, name: str):
    data = valid_data(PolicyDeleteForm(request.POST))
    services.topic_policy_delete(actor=Actor.from_request(request), cluster=cluster, name=name, reason=data["reason"])
    messages.success(request, f"Policy {name} deleted.")
    return redirect_after_change(request, reverse("topic-policies:list", args=[cluster]))


@require_GET
@role_required(Role.VIEWER)
def policy_report(request: HtmxHttpRequest, cluster: str):
    """From the shared topic table (never one call per topic): partitions and replication from it, the configs
    the policies name from DescribeConfigs in batches."""
    cluster_get(cluster)
    context = {"cluster": cluster, "policy_count": len(selectors.policy_rows(cluster))}
    snapshot = topic_selectors.topic_table_snapshot(cluster)
    if snapshot is None:
        context["building"] = MSG_TABLE_BUILDING.format(cluster=cluster)
    else:
        context.update(rows=selectors.policy_report(cluster, snapshot.rows), age_s=round(snapshot.age_s),
                       checked=sum(not r.internal for r in snapshot.rows))
    template = "topics/policies/report.html#report" if request.htmx else "topics/policies/report.html"
    return render(request, template, context)
