"""Thin views: parse, call a selector or service, render a page or its partial."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from changes.actions.topics import CONFIG, DELETE, PURGE, config_kwargs, purge_kwargs
from changes.proposals import propose_if_protected, proposed_response
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.audit.guarded import change_checked
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from access.selectors import NoAuthorizer, acls_list
from brokers.selectors import topic_throughput
from offsets.lag.selectors import topic_lag_chart
from topics import disk, forms, selectors, services
from topics.retention_share import topic_retention_cells
from topics.policies.selectors import detail_violations, policy_rows
from gateway.kafka.types import TOPIC, AclQuery

PAGE_SIZE = 50
MSG_TABLE_BUILDING = ("The topic list of {cluster} is being built in the background (a first look at every "
                      "partition); this page fills in by itself when it is ready.")
MSG_TABLE_NOT_SHARED = ("Redis did not answer: this list comes from this web process's own snapshot, rebuilt in "
                        "the background, which other processes do not share.")


@require_GET
@role_required(Role.VIEWER)
def topic_list(request: HtmxHttpRequest, cluster: str):
    """Reads the cluster's shared snapshot only (Kafka is asked for the configs of the topics shown, never for all
    partitions); without one yet, says it is being built and polls."""
    cluster_get(cluster)
    query = request.GET.get("q", "").strip()
    regex = request.GET.get("regex") == "1"
    internal = request.GET.get("internal") == "1"
    sort = request.GET.get("sort", "name")
    descending = request.GET.get("desc") == "1"
    params = request.GET.copy()
    params.pop("page", None)
    context = {"cluster": cluster, "q": query, "regex": regex, "internal": internal, "sort": sort,
               "desc": descending, "query": params.urlencode()}
    snapshot = selectors.topic_table_snapshot(cluster)
    if snapshot is None:
        selectors.filter_topics([], query=query, regex=regex)  # a pattern that does not compile is said now
        context["building"] = MSG_TABLE_BUILDING.format(cluster=cluster)
    else:
        table = snapshot.rows
        usage = disk.disk_usage(cluster)
        rates = topic_throughput(cluster)  # what the broker metrics sampler last stored (brokers/)
        by_number = {"size": usage.by_topic if usage else None,
                     **{key: {t: r.get(key, 0.0) for t, r in rates.items()} for key in ("bytes_in", "bytes_out")}}
        rows = selectors.filter_topics(table, query=query, regex=regex, include_internal=internal,
                                       sort="size" if sort in by_number else sort, descending=descending,
                                       sizes=by_number.get(sort, by_number["size"]))
        page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
        page.object_list = disk.with_sizes(selectors.with_configs(cluster, list(page.object_list)), usage)
        context.update(page=page, total=len(rows), unknown_counts=sum(r.messages is None for r in table),
                       age_s=round(snapshot.age_s), not_shared=None if snapshot.shared else MSG_TABLE_NOT_SHARED,
                       sizes_known=usage is not None or not table, rates=rates,
                       configs_s=round(settings.TOPIC_LIST_CONFIGS_S))
    return render(request, "topics/list.html#topic-table" if request.htmx else "topics/list.html", context)


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def topic_create(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    form = forms.TopicCreateForm(request.POST or None)
    if request.method == "POST":
        data = valid_data(form)
        services.topic_create(actor=Actor.from_request(request), cluster=cluster, name=data["name"],
                              partitions=data["partitions"], replication_factor=data["replication_factor"],
                              configs=data["configs"], reason=data["reason"],
                              policy_override=data["override_policy"])
        messages.success(request, f"Topic {data['name']} created.")
        return redirect_after_change(request, reverse("topics:detail", args=[cluster, data["name"]]))
    return render(request, "topics/create.html", {"cluster": cluster, "form": form,
                                                  "policies": policy_rows(cluster)})


@require_GET
@role_required(Role.VIEWER)
def topic_detail(request: HtmxHttpRequest, cluster: str, topic: str):
    """The topic in tabs (overview, consumers, configuration, partitions, ACLs; messages is a page of its own):
    each tab reads only what it shows, beyond the topic's description."""
    tab = request.GET.get("tab", "overview")
    tab = tab if tab in TOPIC_TABS else "overview"
    detail = selectors.topic_detail(cluster, topic)
    context = {
        "cluster": cluster, "topic": detail, "topic_name": detail.name, "tab": tab,
        "partition_count": len(detail.partitions), "overrides": sum(1 for c in detail.configs if c.is_override),
    }
    if tab == "partitions" or request.htmx:  # the partitions partial refreshes itself
        context["retention"] = {str(p): cell for p, cell in topic_retention_cells(cluster, detail).items()}
    if request.htmx:
        return render(request, "topics/detail.html#partitions", context)
    if tab == "overview":
        context["policy_violations"] = detail_violations(
            cluster, detail.name, partitions=len(detail.partitions), replication_factor=detail.replication_factor,
            internal=detail.internal, configs=detail.configs)
    elif tab == "consumers":
        context.update(chart=topic_lag_chart(cluster, topic, request.GET.get("range")),
                       chart_url=reverse("topics:lag", args=[cluster, topic]))
    elif tab == "configuration":
        context.update(config_form=forms.TopicConfigChangeForm(), delete_form=forms.DeleteForm())
    elif tab == "partitions":
        context.update(partitions_form=forms.PartitionsForm(initial={"new_total": len(detail.partitions) + 1}),
                       purge_form=forms.PurgeForm())
    elif tab == "acls":
        context.update(topic_acls(cluster, detail.name))
    return render(request, "topics/detail.html", context)


TOPIC_TABS = ("overview", "consumers", "configuration", "partitions", "acls")


def topic_acls(cluster: str, topic: str) -> dict:
    """The bindings that apply to the topic (its name, the wildcard, prefixes covering it), or why there are none."""
    try:
        return {"acls": acls_list(cluster, AclQuery(resource_type="TOPIC", resource_name=topic, pattern_type="MATCH"))}
    except NoAuthorizer as exc:
        return {"acls": [], "no_authorizer": exc.message}


@require_GET
@role_required(Role.VIEWER)
def topic_lag(request: HtmxHttpRequest, cluster: str, topic: str):
    """Consumer lag on this topic over time: swapped in by the range links, or a page of its own without htmx."""
    cluster_get(cluster)
    context = {"cluster": cluster, "topic_name": topic, "chart": topic_lag_chart(cluster, topic, request.GET.get("range")),
               "chart_url": reverse("topics:lag", args=[cluster, topic])}
    return render(request, "offsets/_lag_chart.html" if request.htmx else "topics/lag.html", context)


@require_POST
@role_required(Role.ADMIN)
def topic_config_preview(request: HtmxHttpRequest, cluster: str, topic: str):
    data = valid_data(forms.TopicConfigChangeForm(request.POST))
    changes = selectors.config_change_preview(cluster, TOPIC, topic, set_values=data["set_values"],
                                              delete=data["delete"])
    context = {"cluster": cluster, "topic_name": topic, "changes": changes, "form_data": request.POST,
               "apply_url": reverse("topics:config-apply", args=[cluster, topic])}
    return render(request, "topics/_config_preview.html", context)


@require_POST
@role_required(Role.ADMIN)
def topic_config_apply(request: HtmxHttpRequest, cluster: str, topic: str):
    data = valid_data(forms.TopicConfigChangeForm(request.POST))
    change = propose_if_protected(actor=Actor.from_request(request), action=CONFIG, cluster=cluster,
                                  kwargs=config_kwargs(topic=topic, set_values=data["set_values"],
                                                       delete=data["delete"], policy_override=data["override_policy"]),
                                  reason=data["reason"])
    if change is not None:
        return proposed_response(request, change)
    services.topic_configs_alter(actor=Actor.from_request(request), cluster=cluster, topic=topic,
                                 set_values=data["set_values"], delete=data["delete"], reason=data["reason"],
                                 policy_override=data["override_policy"])
    messages.success(request, f"Configs of {topic} changed.")
    # No "#configs" fragment: a client redirect to the same path plus a fragment only scrolls, it does not reload.
    return redirect_after_change(request, reverse("topics:detail", args=[cluster, topic]))


@require_POST
@role_required(Role.ADMIN)
def topic_partitions_add(request: HtmxHttpRequest, cluster: str, topic: str):
    data = valid_data(forms.PartitionsForm(request.POST))
    services.topic_partitions_add(actor=Actor.from_request(request), cluster=cluster, topic=topic,
                                  new_total=data["new_total"], reason=data["reason"],
                                  policy_override=data["override_policy"])
    messages.success(request, f"{topic} now has {data['new_total']} partitions.")
    return redirect_after_change(request, reverse("topics:detail", args=[cluster, topic]))


@require_POST
@role_required(Role.ADMIN)
def topic_delete(request: HtmxHttpRequest, cluster: str, topic: str):
    data = valid_data(forms.DeleteForm(request.POST))
    change_checked(confirm=data["confirm"], name=topic, what="topic", reason=data["reason"], reason_required=False,
                   message=services.MSG_CONFIRM_MISMATCH.format(name=topic))
    change = propose_if_protected(actor=Actor.from_request(request), action=DELETE, cluster=cluster,
                                  kwargs={"topic": topic}, reason=data["reason"])
    if change is not None:
        return proposed_response(request, change)
    services.topic_delete(actor=Actor.from_request(request), cluster=cluster, topic=topic, confirm=data["confirm"],
                          reason=data["reason"])
    messages.success(request, f"Topic {topic} deleted.")
    return redirect_after_change(request, reverse("topics:list", args=[cluster]))


@require_POST
@role_required(Role.ADMIN)
def topic_purge_preview(request: HtmxHttpRequest, cluster: str, topic: str):
    data = valid_data(forms.PurgeForm(request.POST))
    rows = services.topic_purge_preview(cluster=cluster, topic=topic, partitions=data["partitions"],
                                        before=data["before_offset"])
    context = {"cluster": cluster, "topic_name": topic, "rows": rows, "form_data": request.POST,
               "total": sum(r.records_deleted for r in rows),
               "apply_url": reverse("topics:purge", args=[cluster, topic])}
    return render(request, "topics/_purge_preview.html", context)


@require_POST
@role_required(Role.ADMIN)
def topic_purge(request: HtmxHttpRequest, cluster: str, topic: str):
    data = valid_data(forms.PurgeForm(request.POST))
    change = propose_if_protected(actor=Actor.from_request(request), action=PURGE, cluster=cluster,
                                  kwargs=purge_kwargs(topic=topic, partitions=data["partitions"],
                                                      before=data["before_offset"]), reason=data["reason"])
    if change is not None:
        return proposed_response(request, change)
    plan = services.topic_records_purge(actor=Actor.from_request(request), cluster=cluster, topic=topic,
                                        partitions=data["partitions"], before=data["before_offset"],
                                        reason=data["reason"])
    messages.success(request, f"Deleted {sum(r.records_deleted for r in plan)} records from {topic}.")
    return redirect_after_change(request, reverse("topics:detail", args=[cluster, topic]))
