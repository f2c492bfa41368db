"""Bulk topic pages: pick topics with the topic list's filter, preview every change, confirm with a typed phrase."""

from __future__ import annotations

from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.bulk import max_objects
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest, valid_data
from topics import selectors
from topics.bulk.forms import TopicBulkExecuteForm, TopicBulkForm
from topics.bulk.services import topics_bulk_execute, topics_bulk_preview


def _action_args(data: dict) -> dict:
    return {"action": data["action"], "set_values": data["set_values"], "delete": data["delete"],
            "new_total": data["new_total"], "policy_override": data["override_policy"]}


@require_GET
@role_required(Role.ADMIN)
def bulk_topics(request: HtmxHttpRequest, cluster: str):
    """The topics the filter matches, from the shared topic table (no Kafka call per topic), each checked."""
    cluster_get(cluster)
    query, regex = request.GET.get("q", "").strip(), request.GET.get("regex") == "1"
    context = {"cluster": cluster, "q": query, "regex": regex, "form": TopicBulkForm(), "limit": max_objects()}
    snapshot = selectors.topic_table_snapshot(cluster)
    if snapshot is None:
        selectors.filter_topics([], query=query, regex=regex)
        context["building"] = True
    elif query:
        rows = selectors.filter_topics(snapshot.rows, query=query, regex=regex)
        # No more checkboxes than one batch takes: a filter matching 40,000 topics must not render them all.
        context.update(rows=rows[:max_objects()], matched=len(rows))
    template = "bulk/topics.html#selection" if request.htmx else "bulk/topics.html"
    return render(request, template, context)


@require_POST
@role_required(Role.ADMIN)
def bulk_topics_preview(request: HtmxHttpRequest, cluster: str):
    data = valid_data(TopicBulkForm(request.POST))
    plan = topics_bulk_preview(cluster=cluster, names=request.POST.getlist("topic"), **_action_args(data))
    context = {"cluster": cluster, "plan": plan, "form_data": request.POST,
               "execute_url": reverse("bulk-topics:execute", args=[cluster])}
    return render(request, "bulk/_topics_preview.html", context)


@require_POST
@role_required(Role.ADMIN)
def bulk_topics_execute(request: HtmxHttpRequest, cluster: str):
    data = valid_data(TopicBulkExecuteForm(request.POST))
    outcome = topics_bulk_execute(actor=Actor.from_request(request), cluster=cluster,
                                  names=request.POST.getlist("topic"), confirm=data["confirm"],
                                  reason=data["reason"], **_action_args(data))
    return render(request, "bulk/_result.html", {"cluster": cluster, "outcome": outcome, "noun": "topic"})
