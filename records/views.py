"""Search, produce, copy and the schema registry's pages. A search runs only while its page asks for the next
step, so a closed tab costs nothing and nothing is left running; without JavaScript each step is a button."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from console.accounts.decorators import role_required
from console.accounts.roles import Role, require_role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from gateway.kafka.errors import RegistryError
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from masking.apply import check_search, mask_row, mask_rows
from masking.selectors import masker_for
from records import selectors, services
from records.browse import browse_rows, topic_partitions
from records.export_views import export_links
from records.forms import CopyForm, PositionForm, ProduceForm, SearchForm
from records.search import SearchState, ending_text, search_begin, search_step, search_stop


def _search_context(cluster: str, topic: str, state: SearchState, matches: list, masker) -> dict:
    rows = mask_rows(masker, browse_rows(cluster, matches))  # one line each, as in the browser
    return {"cluster": cluster, "topic_name": topic, "state": state, "token": state.token(), "rows": rows,
            "ending": ending_text(state)}


@require_GET
@role_required(Role.VIEWER)
def topic_search(request: HtmxHttpRequest, cluster: str, topic: str):
    """The form; with `run`, the search begins and its first step is in the page."""
    cluster_get(cluster)
    form = SearchForm(request.GET if "run" in request.GET else None, partitions=topic_partitions(cluster, topic))
    context = {"cluster": cluster, "topic_name": topic, "form": form}
    if form.is_bound:
        spec = valid_data(form) and form.spec(topic)
        masker = masker_for(cluster, topic, request.user)
        check_search(masker, spec.filter)  # what a reader may not see, they may not search either
        state, matches = search_step(search_begin(cluster, spec))
        context.update(_search_context(cluster, topic, state, matches, masker))
        context["export"] = export_links(cluster, topic, request.GET.dict(), state)
    if request.htmx and form.is_bound:
        return render(request, "records/search.html#results", context)
    return render(request, "records/search.html", context)


@require_GET
@role_required(Role.VIEWER)
def topic_search_step(request: HtmxHttpRequest, cluster: str, topic: str):
    """The next step: new matches to append and the progress, which asks for the step after it unless done."""
    state = SearchState.from_token(request.GET.get("state", ""))
    if state.cluster != cluster or state.spec.topic != topic:
        raise ConsoleError("This search belongs to another topic.")
    masker = masker_for(cluster, topic, request.user)
    check_search(masker, state.spec.filter)  # a token is not bound to a person: check its filters again
    if "stop" in request.GET:
        state, matches = search_stop(state), []
    else:
        state, matches = search_step(state)
    context = _search_context(cluster, topic, state, matches, masker)
    if request.htmx:
        return render(request, "records/_search_step.html", context)
    context["form"] = SearchForm(partitions=topic_partitions(cluster, topic))
    return render(request, "records/search.html", context)


@require_http_methods(["GET", "POST"])
@role_required(Role.VIEWER)
def topic_produce(request: HtmxHttpRequest, cluster: str, topic: str):
    """GET: the form (anyone may look); POST: send the record (operators)."""
    registration = cluster_get(cluster)
    form = ProduceForm(request.POST or None, partitions=topic_partitions(cluster, topic))
    if request.method == "POST":
        require_role(request.user, Role.OPERATOR)
        data = valid_data(form)
        written = services.record_produce(
            actor=Actor.from_request(request), cluster=cluster, topic=topic,
            key=services.Payload(None if data["key_null"] else data["key"], subject=data["key_subject"].strip()),
            value=services.Payload(None if data["value_null"] else data["value"],
                                   subject=data["value_subject"].strip(), version=data["value_version"]),
            headers=data["headers"], partition=data["partition"], reason=data["reason"])
        messages.success(request, f"Record written to {topic} partition {written.partition} at offset "
                                  f"{written.offset}.")
        browse = reverse("topics:record", args=[cluster, topic, written.partition, written.offset])
        return redirect_after_change(request, browse)
    context = {"cluster": cluster, "topic_name": topic, "form": form,
               "has_registry": bool(registration.schema_registry_url)}
    if registration.schema_registry_url:
        try:
            context["subjects"] = selectors.subjects(cluster)
        except ConsoleError as exc:
            context["registry_problem"] = exc.message
        except Exception as exc:  # the form still works for plain records when the registry is down
            context["registry_problem"] = getattr(exc, "message", str(exc))
    return render(request, "records/produce.html", context)


@require_http_methods(["GET", "POST"])
@role_required(Role.VIEWER)
def topic_copy(request: HtmxHttpRequest, cluster: str, topic: str):
    """GET: the record and where to copy it; POST: copy it (operators)."""
    cluster_get(cluster)
    if request.method == "POST":
        require_role(request.user, Role.OPERATOR)
        data = valid_data(CopyForm(request.POST))
        written = services.record_copy(
            actor=Actor.from_request(request), cluster=cluster, topic=topic, partition=data["partition"],
            offset=data["offset"], target_topic=data["target_topic"].strip(),
            target_cluster=data["target_cluster"].strip(), target_partition=data["target_partition"],
            reason=data["reason"])
        target_cluster = data["target_cluster"].strip() or cluster
        messages.success(request, f"Copied to {data['target_topic']} partition {written.partition} at offset "
                                  f"{written.offset}.")
        browse = reverse("topics:record", args=[target_cluster, data["target_topic"].strip(), written.partition,
                                                written.offset])
        return redirect_after_change(request, browse)
    position = valid_data(PositionForm(request.GET))
    row = mask_row(masker_for(cluster, topic, request.user),
                   selectors.record_row(selectors.record_at(cluster, topic, position["partition"], position["offset"])))
    return render(request, "records/copy.html", {"cluster": cluster, "topic_name": topic, "row": row,
                                                 "form": CopyForm(initial=position)})


@require_GET
@role_required(Role.VIEWER)
def topic_reset_here(request: HtmxHttpRequest, cluster: str, topic: str):
    """The groups that commit on this topic, each with a link to its reset page set to this record's offset."""
    position = valid_data(PositionForm(request.GET))
    partition, offset = position["partition"], position["offset"]
    groups = selectors.groups_committed_on(cluster, topic, partition)
    # The reset wizard's own fields: this partition ticked, to-offset with this record's offset.
    links = [(group, committed, reverse("offsets:reset", args=[cluster, group]) + "?" + urlencode(
        {"scope": "chosen", "partition": f"{topic}:{partition}", "strategy": "to-offset", "offset": offset}))
             for group, committed in groups]
    return render(request, "records/reset_here.html", {"cluster": cluster, "topic_name": topic, "links": links,
                                                        "partition": partition, "offset": offset})


@require_GET
@role_required(Role.VIEWER)
def schema_list(request: HtmxHttpRequest, cluster: str):
    context = {"cluster": cluster, "registry": selectors.registry_of(cluster), "subjects": []}
    if context["registry"]:
        try:
            context["subjects"] = selectors.subjects(cluster)
        except RegistryError as exc:
            context["problem"] = exc.message
    return render(request, "records/schemas.html", context)


@require_GET
@role_required(Role.VIEWER)
def schema_detail(request: HtmxHttpRequest, cluster: str, schema_id: int | None = None, subject: str = "",
                  version: int | None = None):
    cluster_get(cluster)
    view = selectors.schema_view(cluster, schema_id=schema_id, subject=subject, version=version)
    template = "records/_schema.html" if request.htmx else "records/schema.html"
    return render(request, template, {"cluster": cluster, "view": view})
