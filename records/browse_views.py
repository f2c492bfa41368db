"""The message browser's pages: the list (the whole page, or its result swapped in), the next page of rows, the
live tail's new rows, the stable link to one record, and saved filters. Rows are masked here, before any
template sees them; a filter on something masked is refused, as in a search."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import push_url

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from masking.apply import check_search, mask_row
from masking.selectors import masker_for
from records.browse import BrowseQuery, browse_page, browse_tail, format_cursor, parse_cursor, topic_partitions
from records.browse_forms import BrowseForm, query_params, query_string
from records.saved_filters import saved_filter_delete, saved_filter_save, saved_filters

TAIL_EVERY_S = 1  # a record written after the page opened shows within a poll and a read


@require_GET
@role_required(Role.VIEWER)
def topic_messages(request: HtmxHttpRequest, cluster: str, topic: str):
    return _browser(request, cluster, topic, request.GET)


@require_GET
@role_required(Role.VIEWER)
def topic_record(request: HtmxHttpRequest, cluster: str, topic: str, partition: int, offset: int):
    """A stable link to one record: the browser on its partition from it, with it open."""
    params = QueryDict(mutable=True)
    params.update({"start": "offset", "partition": str(partition), "offset": str(offset)})
    return _browser(request, cluster, topic, params, opened=(partition, offset))


def _browser(request: HtmxHttpRequest, cluster: str, topic: str, params: QueryDict,
             opened: tuple[int, int] | None = None):
    cluster_get(cluster)
    partitions = topic_partitions(cluster, topic)
    form = BrowseForm(params, topic=topic, partitions=partitions)
    base = reverse("topics:messages", args=[cluster, topic])
    context = {"cluster": cluster, "topic_name": topic, "form": form, "tab": "messages", "partitions": partitions,
               "base_url": base}
    if not form.is_valid():
        if request.htmx:
            valid_data(form)  # raises: the problems go to their fields
        # The whole page, with each problem at its field and the topic's partitions to choose from: no dead end.
        return render(request, "topics/messages.html", context, status=400)
    query = form.query()
    masker = masker_for(cluster, topic, request.user)
    check_search(masker, query.filter)  # what a reader may not see, they may not filter on either
    if params.get("tail"):
        return _tail(request, cluster, topic, query, parse_cursor(params.get("tops", "")), masker, context)
    after = parse_cursor(form.cleaned_data.get("after", ""))
    page = browse_page(cluster, topic, query, after=after or None)
    context.update(
        page=page, query=query, entries=_masked(masker, page.entries), first_page=not after,
        view_query=query_string(query), view_params=query_params(query),
        opened="" if opened is None else f"r-{opened[0]}-{opened[1]}",
        more_url=base + "?" + query_string(query, after=format_cursor(page.cursor)),
        tail_url=base + "?" + query_string(query, tail="1") if page.tops else "", tops=format_cursor(page.tops),
        tail_every=TAIL_EVERY_S)
    if request.htmx and after:
        return render(request, "records/_browse_rows.html", context)
    context["saved"] = saved_filters(request.user, cluster)
    if request.htmx:
        # The address bar gets the view's own query string (defaults left out): the link to share or bookmark.
        return push_url(render(request, "topics/messages.html#records", context),
                        base + (f"?{context['view_query']}" if context["view_query"] else ""))
    return render(request, "topics/messages.html", context)


def _tail(request, cluster: str, topic: str, query: BrowseQuery, tops: dict[int, int], masker, context: dict):
    page = browse_tail(cluster, topic, query, tops)
    if page is None:
        return HttpResponse(status=204)  # nothing new: htmx leaves the page as it is
    context.update(page=page, query=query, entries=_masked(masker, page.entries), tops=format_cursor(page.tops))
    return render(request, "records/_browse_tail.html", context)


def _masked(masker, entries: list) -> list:
    return entries if not masker else [e if e.is_gap else mask_row(masker, e) for e in entries]


@require_POST
@role_required(Role.VIEWER)
def saved_filter_create(request: HtmxHttpRequest, cluster: str, topic: str):
    """Saves the view the form describes under a name, for this person on this cluster."""
    cluster_get(cluster)
    form = BrowseForm(request.POST, topic=topic, partitions=topic_partitions(cluster, topic))
    valid_data(form)
    saved = saved_filter_save(user=request.user, cluster=cluster, topic=topic, name=request.POST.get("name", ""),
                              query=form.query())
    messages.success(request, f"Filter “{saved.name}” saved.")
    url = reverse("topics:messages", args=[cluster, topic]) + (f"?{saved.query}" if saved.query else "")
    return redirect_after_change(request, url)


@require_POST
@role_required(Role.VIEWER)
def saved_filter_remove(request: HtmxHttpRequest, cluster: str, filter_id: int):
    cluster_get(cluster)
    saved = {f.pk: f for f in saved_filters(request.user, cluster)}.get(filter_id)
    saved_filter_delete(user=request.user, cluster=cluster, filter_id=filter_id)
    messages.success(request, f"Filter “{saved.name}” deleted.")
    url = reverse("topics:messages", args=[cluster, saved.topic]) if saved else reverse("topics:list", args=[cluster])
    return redirect_after_change(request, url)
