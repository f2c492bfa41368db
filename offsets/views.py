"""Consumer group pages: thin views over offsets.selectors and offsets.services."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from changes.actions.offsets import OFFSETS_DELETE, RESET, SHARE_OFFSETS_DELETE, offsets_delete_kwargs, reset_kwargs
from changes.guard import is_protected
from changes.proposals import propose_if_protected, proposed_response
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.audit.guarded import change_checked
from console.audit.selectors import action_outcome
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError, error_status
from gateway.kafka.errors import KafkaGatewayError
from console.http import HtmxHttpRequest, redirect_after_change, safe_filename, valid_data
from console.uploads import upload_refusal
from offsets import selectors, services
from offsets.resets import services as resets
from offsets.resets.form_input import time_zones
from offsets.resets.planning import describe_strategy
from offsets.resets.preview import reset_preview
from offsets.resets.scope_options import other_groups, reset_scope_options
from offsets.resets.totals import plan_totals
from offsets.forms import ExecuteForm, ResetForm, initial_from_link, strategies_for
from offsets.history.selectors import group_timeline, recorder_health
from offsets.kinds import (CONSUMER, SHARE, STREAMS, GroupKind, consumer_description_or_kind, consumer_detail_or_kind,
                           kind_for)
from offsets.group_table import filter_entries
from offsets.list_rows import group_list_rows
from offsets.lag.group_state import group_lag_state
from offsets.lag.selectors import group_lag_chart, group_statuses, sampler_health

LAG_STATUSES = ["ERR", "STOP", "BLOCKED", "WARN", "OK"]
GROUPS_PAGE_SIZE = 50  # as the topic list: every row shown is described (offsets/list_rows.py)
MSG_GROUPS_BUILDING = ("The groups list of {cluster} is being built in the background (every group of every "
                       "type); this page fills in by itself when it is ready.")
MSG_GROUPS_NOT_SHARED = ("Redis did not answer: this list comes from this web process's own snapshot, rebuilt in "
                         "the background, which other processes do not share.")


@require_GET
@role_required(Role.VIEWER)
def group_list(request: HtmxHttpRequest, cluster: str):
    """Filters, orders and pages the cluster's shared groups list (offsets/group_table.py), never Kafka's whole
    list; only the page's groups are described and fetched from Kafka. Without a list yet, says it is being built
    and polls."""
    cluster_get(cluster)
    q = request.GET.get("q", "").strip().lower()
    state = request.GET.get("state", "")
    lag_status = request.GET.get("status", "")
    sort = request.GET.get("sort", "")
    group_type = request.GET.get("type", "")
    params = request.GET.copy()
    params.pop("page", None)
    states = ["Stable", "Empty", "PreparingRebalance", "CompletingRebalance", "Dead", "Unknown"]
    context = {"cluster": cluster, "query": params.urlencode(), "q": q, "state": state, "states": states,
               "lag_status": lag_status, "lag_statuses": LAG_STATUSES, "sort": sort,
               "sampler": sampler_health(cluster), "group_type": group_type,
               "group_types": ["classic", "consumer", "share", "streams"]}
    snapshot = selectors.group_table_snapshot(cluster)
    if snapshot is None:
        context["building"] = MSG_GROUPS_BUILDING.format(cluster=cluster)
    else:
        chosen = filter_entries(snapshot.rows, query=q, group_type=group_type, state=state, lag_status=lag_status,
                                sort=sort)
        page = Paginator(chosen, GROUPS_PAGE_SIZE).get_page(request.GET.get("page"))
        statuses = group_statuses(cluster, groups=[entry.group_id for entry in page.object_list])
        rows = group_list_rows(cluster, [entry.listing() for entry in page.object_list], statuses)
        context.update(rows=[(r, statuses.get(r.group_id)) for r in rows], page=page, total=len(chosen),
                       age_s=round(snapshot.age_s), types_problem=snapshot.note,
                       not_shared=None if snapshot.shared else MSG_GROUPS_NOT_SHARED)
    return render(request, "offsets/list.html#group-table" if request.htmx else "offsets/list.html", context)


GROUP_TABS = ("partitions", "members", "history")


@require_GET
@role_required(Role.VIEWER)
def group_detail(request: HtmxHttpRequest, cluster: str, group: str):
    """The group's status from its last sample (offsets/lag/group_state.py) over three tabs, each reading only what
    it shows: partitions (offsets read live), members (one describe), history (lag chart, rebalances, changes).
    The status and the live tab refresh every 5 s (the htmx request); the charts and histories do not need to."""
    tab = request.GET.get("tab", GROUP_TABS[0])
    tab = tab if tab in GROUP_TABS else GROUP_TABS[0]
    if tab == "partitions":
        kind, detail = consumer_detail_or_kind(cluster, group)
        description = detail.description if detail is not None else None
    else:
        (kind, description), detail = consumer_description_or_kind(cluster, group), None
    if kind is not CONSUMER:  # the page of kafka-share-groups' or kafka-streams-groups' --describe
        context = {"cluster": cluster, "group": group, "detail": kind.detail(cluster, group)}
        if kind is STREAMS:  # the share page shows no lag status
            context["lag_status"] = group_statuses(cluster, group=group).get(group)
        return render(request, f"offsets/{kind.name}_detail.html", context)
    live = None
    if detail is not None:
        live = {p.key: p.committed for p in detail.partitions}
    state = group_lag_state(cluster, group, live=live, has_members=bool(description.members))
    context = {"cluster": cluster, "group": group, "tab": tab, "description": description, "detail": detail,
               "lag": state, "read_at": datetime.now(UTC)}
    if request.htmx:
        return render(request, "offsets/detail.html#group-live", context)
    if tab == "history":
        context["history"] = list(reversed(group_timeline(cluster, group)))[:100]
        context["recorder"] = recorder_health(cluster)
        context.update(chart=group_lag_chart(cluster, group, request.GET.get("range")),
                       chart_url=reverse("offsets:lag", args=[cluster, group]))
    return render(request, "offsets/detail.html", context)


@require_GET
@role_required(Role.VIEWER)
def group_lag(request: HtmxHttpRequest, cluster: str, group: str):
    """The lag chart alone: swapped in by the range links, or a page of its own without htmx."""
    cluster_get(cluster)
    context = {"cluster": cluster, "group": group, "chart": group_lag_chart(cluster, group, request.GET.get("range")),
               "chart_url": reverse("offsets:lag", args=[cluster, group])}
    return render(request, "offsets/_lag_chart.html" if request.htmx else "offsets/lag.html", context)


def _preview_context(cluster: str, group: str, kind: GroupKind, form: ResetForm) -> dict:
    """The dry run: kafka-consumer-groups' semantics, or kafka-share-groups' or kafka-streams-groups' for those."""
    preview = reset_preview(cluster, group, form.scope_value(), form.strategy_value(cluster), kind=kind)
    carried = form.carried()
    return {"cluster": cluster, "group": group, "preview": preview, "totals": plan_totals(preview.plan),
            "strategy_text": describe_strategy(preview.plan.strategy), "carried": carried,
            "query": urlencode(carried), "execute_form": ExecuteForm(initial={"fingerprint": preview.fingerprint}),
            "share": kind is SHARE, "streams": kind is STREAMS, "protected": is_protected(cluster, f"group:{group}")}


def _wizard_context(cluster: str, group: str, kind: GroupKind, form: ResetForm, options) -> dict:
    return {"cluster": cluster, "group": group, "form": form, "options": options,
            "chosen_topics": set(form["topic"].value() or ()),
            "chosen_partitions": set(form["partition"].value() or ()),
            "strategies": strategies_for(kind), "time_zones": time_zones(),
            "source_groups": other_groups(cluster, group) if "from-group" in kind.strategies else [],
            "share": kind is SHARE, "streams": kind is STREAMS}


def _link_initial(query, options) -> dict:
    """A link's prefill; topics and partitions the picker does not list (the group never read them) go to the
    free-text topics, so nothing the link asked for is silently dropped."""
    initial = initial_from_link(query)
    listed_topics = {o.topic for o in options}
    listed_partitions = {p.choice for o in options for p in o.partitions}
    unlisted = [t for t in initial["topic"] if t not in listed_topics]
    unlisted += [p for p in initial["partition"] if p not in listed_partitions]
    if unlisted:
        initial["topic"] = [t for t in initial["topic"] if t in listed_topics]
        initial["partition"] = [p for p in initial["partition"] if p in listed_partitions]
        initial["other_topics"] = " ".join(filter(None, [initial.get("other_topics", ""), *unlisted]))
    return initial


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def group_reset(request: HtmxHttpRequest, cluster: str, group: str):
    """GET: the wizard. POST: the preview (a dry run), which carries what execute needs: swapped in under the form
    with htmx, or the whole page again (form as typed, preview or problems under it) without JavaScript."""
    kind = kind_for(cluster, group)
    if upload_refusal(request):  # a CSV that streamed past the upload limit: refused, nothing of it kept
        raise ConsoleError(upload_refusal(request))
    if request.method == "POST" and request.htmx:
        form = ResetForm(request.POST, request.FILES, kind=kind)
        valid_data(form)
        return render(request, "offsets/_preview.html", _preview_context(cluster, group, kind, form))
    options = reset_scope_options(cluster, group, kind)
    if request.method == "GET":
        # Links such as "reset to here" from the lag chart or a record arrive with the scope and strategy filled in.
        form = ResetForm(initial=_link_initial(request.GET, options), kind=kind)
        return render(request, "offsets/reset.html", _wizard_context(cluster, group, kind, form, options))
    form = ResetForm(request.POST, request.FILES, kind=kind)
    context = _wizard_context(cluster, group, kind, form, options)
    status = 400
    if form.is_valid():
        try:
            context.update(_preview_context(cluster, group, kind, form))
            status = 200
        except (ConsoleError, KafkaGatewayError) as exc:  # shown over the form as typed (or at its field)
            status = error_status(exc)
            if getattr(exc, "field", "") in form.fields:
                form.add_error(exc.field, exc.message)
            else:
                context["error"] = exc.message
    return render(request, "offsets/reset.html", context, status=status)


@require_GET
@role_required(Role.OPERATOR)
def group_reset_export(request: HtmxHttpRequest, cluster: str, group: str):
    kind = kind_for(cluster, group)
    form = ResetForm(request.GET, kind=kind)
    valid_data(form)
    plan = reset_preview(cluster, group, form.scope_value(), form.strategy_value(cluster), kind=kind).plan
    response = HttpResponse(plan.export_csv(), content_type="text/csv")
    response["Content-Disposition"] = content_disposition_header(True, f"reset-{safe_filename(group)}.csv")
    return response


@require_POST
@role_required(Role.OPERATOR)
def group_reset_execute(request: HtmxHttpRequest, cluster: str, group: str):
    kind = kind_for(cluster, group)
    form = ResetForm(request.POST, kind=kind)
    valid_data(form)
    execute = valid_data(ExecuteForm(request.POST))
    change = _propose_reset(request, cluster, group, kind, form.scope_value(), form.strategy_value(cluster), execute)
    if change is not None:
        return proposed_response(request, change)
    audit = []
    resets.group_offsets_reset(actor=Actor.from_request(request), cluster=cluster, group=group,
                               scope=form.scope_value(), strategy=form.strategy_value(cluster),
                               reason=execute["reason"], confirm=execute["confirm"],
                               expected_fingerprint=execute["fingerprint"], kind=kind, on_audit=audit.append)
    messages.success(request, _done_message(f"Offsets of {group} reset.", cluster, group, audit))
    return redirect_after_change(request, reverse("offsets:detail", args=[cluster, group]))


def _propose_reset(request, cluster: str, group: str, kind: GroupKind, scope, strategy, execute: dict,
                   revert_of: int | None = None):
    """On a protected group: the change request for this reset (confirmed as the reset itself is), else None."""
    change_checked(confirm=execute["confirm"], name=group, what="group", reason=execute["reason"],
                   message=services.MSG_CONFIRM_GROUP.format(group=group))
    return propose_if_protected(actor=Actor.from_request(request), action=RESET, cluster=cluster,
                                kwargs=reset_kwargs(group=group, kind=kind, scope=scope, strategy=strategy,
                                                    revert_of=revert_of), reason=execute["reason"])


def _done_message(text: str, cluster: str, group: str, audit: list):
    """The flash after a reset: its audit event (before and after) and the revert of it, one click away."""
    event = action_outcome(audit[0]) if audit else None
    if event is None:
        return f"{text} The audit log has the offsets before and after."
    return format_html('{} <a href="{}">Audit event #{}</a> has the offsets before and after · '
                       '<a class="button" href="{}">Undo: revert to before</a>', text,
                       reverse("audit:detail", args=[event.seq]), event.seq,
                       reverse("offsets:revert", args=[cluster, group, event.seq]))


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def group_revert(request: HtmxHttpRequest, cluster: str, group: str, seq: int):
    """GET: preview of going back to audit event `seq`'s "before" offsets. POST: execute it."""
    kind = kind_for(cluster, group)
    event, strategy, scope = resets.revert_strategy(seq, kind)
    if request.method == "POST":
        execute = valid_data(ExecuteForm(request.POST))
        change = _propose_reset(request, event.cluster or cluster, group, kind, scope, strategy, execute,
                                revert_of=seq)
        if change is not None:
            return proposed_response(request, change)
        audit = []
        resets.group_offsets_revert(actor=Actor.from_request(request), cluster=cluster, seq=seq,
                                    reason=execute["reason"], confirm=execute["confirm"],
                                    expected_fingerprint=execute["fingerprint"], kind=kind, on_audit=audit.append)
        messages.success(request, _done_message(f"Offsets of {group} are back to those before audit event #{seq}.",
                                                cluster, group, audit))
        return redirect_after_change(request, reverse("offsets:detail", args=[cluster, group]))
    preview = reset_preview(event.cluster or cluster, group, scope, strategy, kind=kind)
    context = {"cluster": cluster, "group": group, "preview": preview, "event": event,
               "execute_form": ExecuteForm(initial={"fingerprint": preview.fingerprint}),
               "execute_url": reverse("offsets:revert", args=[cluster, group, seq])}
    return render(request, "offsets/revert.html", context)


@require_POST
@role_required(Role.ADMIN)
def group_delete(request: HtmxHttpRequest, cluster: str, group: str):
    execute = request.POST
    services.group_delete(actor=Actor.from_request(request), cluster=cluster, group=group,
                          confirm=execute.get("confirm", ""), reason=execute.get("reason", ""),
                          kind=kind_for(cluster, group))
    messages.success(request, f"Group {group} deleted.")
    return redirect_after_change(request, reverse("offsets:groups", args=[cluster]))


def _offsets_delete_scope(post) -> tuple[str, list[int] | None]:
    topic = post.get("topic", "").strip()
    raw = post.get("partitions", "").replace(" ", "")
    try:
        partitions = [int(p) for p in raw.split(",") if p] or None
    except ValueError as exc:
        raise ConsoleError("Partitions are numbers separated by commas.") from exc
    if not topic:
        raise ConsoleError("Name the topic whose committed offsets should be deleted.")
    return topic, partitions


@require_POST
@role_required(Role.ADMIN)
def group_offsets_delete_preview(request: HtmxHttpRequest, cluster: str, group: str):
    topic, partitions = _offsets_delete_scope(request.POST)
    chosen = services.group_offsets_delete_preview(cluster=cluster, group=group, topic=topic, partitions=partitions)
    context = {"cluster": cluster, "group": group, "chosen": sorted(chosen.items()), "form_data": request.POST}
    return render(request, "offsets/_offsets_delete_preview.html", context)


@require_POST
@role_required(Role.ADMIN)
def group_offsets_delete(request: HtmxHttpRequest, cluster: str, group: str):
    topic, partitions = _offsets_delete_scope(request.POST)
    change_checked(confirm=request.POST.get("confirm", ""), name=group, what="group",
                   reason=request.POST.get("reason", ""), message=services.MSG_CONFIRM_GROUP.format(group=group))
    change = propose_if_protected(actor=Actor.from_request(request), action=OFFSETS_DELETE, cluster=cluster,
                                  kwargs=offsets_delete_kwargs(group=group, topic=topic, partitions=partitions),
                                  reason=request.POST.get("reason", ""))
    if change is not None:
        return proposed_response(request, change)
    services.group_offsets_delete(actor=Actor.from_request(request), cluster=cluster, group=group, topic=topic,
                                  partitions=partitions, confirm=request.POST.get("confirm", ""),
                                  reason=request.POST.get("reason", ""))
    messages.success(request, f"Committed offsets of {group} for {topic} deleted.")
    return redirect_after_change(request, reverse("offsets:detail", args=[cluster, group]))


@require_POST
@role_required(Role.ADMIN)
def share_offsets_delete(request: HtmxHttpRequest, cluster: str, group: str):
    """A share group's start offsets for one topic (kafka-share-groups --delete-offsets)."""
    topic = request.POST.get("topic", "").strip()
    if not topic:
        raise ConsoleError("Name the topic whose start offsets should be deleted.")
    change_checked(confirm=request.POST.get("confirm", ""), name=group, what="group", reason="",
                   reason_required=False, message=services.MSG_CONFIRM_GROUP.format(group=group))
    change = propose_if_protected(actor=Actor.from_request(request), action=SHARE_OFFSETS_DELETE, cluster=cluster,
                                  kwargs={"group": group, "topic": topic}, reason=request.POST.get("reason", ""))
    if change is not None:
        return proposed_response(request, change)
    services.share_offsets_delete(actor=Actor.from_request(request), cluster=cluster, group=group, topic=topic,
                                  confirm=request.POST.get("confirm", ""), reason=request.POST.get("reason", ""))
    messages.success(request, f"Start offsets of {group} for {topic} deleted.")
    return redirect_after_change(request, reverse("offsets:detail", args=[cluster, group]))
