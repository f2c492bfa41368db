import csv
import json

from django.core.paginator import Paginator
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.forms import AuditFilterForm
from console.audit.models import AuditEvent
from console.audit.selectors import audit_actions, audit_events, with_intents
from console.witness.records import event_json
from console.witness.status import witness_status
from console.csv_cells import guard_formula
from console.http import HtmxHttpRequest

CSV_COLUMNS = ("seq", "created_at", "actor_name", "source", "remote_addr", "cluster", "action", "target", "reason",
               "outcome", "error", "correlation_id", "params", "before", "after", "prev_hash", "hash")


ACTIONS_PER_PAGE = 50


@require_GET
@role_required(Role.VIEWER)
def audit_list(request: HtmxHttpRequest):
    """One row per action (its intent and outcome joined), filtered by the query string; the exports keep every
    row of the log."""
    form = AuditFilterForm(request.GET or None)
    page = Paginator(audit_actions(form.filters()), ACTIONS_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {"form": form, "page": page, "actions": with_intents(page.object_list), "query": query.urlencode()}
    if request.htmx:
        return render(request, "audit/list.html#audit-table", context)
    return render(request, "audit/list.html", {**context, "witness": witness_status()})


@require_GET
@role_required(Role.VIEWER)
def audit_detail(request: HtmxHttpRequest, seq: int):
    """The event and every row of its action; with htmx, only what it changed (the log's expanded row)."""
    event = get_object_or_404(AuditEvent, seq=seq)
    related = AuditEvent.objects.filter(correlation_id=event.correlation_id).order_by("seq")
    pretty = {name: json.dumps(getattr(event, name), indent=2, sort_keys=True) for name in ("params", "before", "after")}
    context = {"event": event, "related": related, "pretty": pretty}
    if request.htmx:
        return render(request, "audit/detail.html#event-changes", context)
    return render(request, "audit/detail.html", context)


# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection); names, reasons and
# errors come from people and from Kafka, so such a cell gets a leading apostrophe, which shows it as text.
def spreadsheet_safe(value):
    return guard_formula(value) if isinstance(value, str) else value


class _Echo:
    def write(self, value: str) -> str:
        return value


@require_GET
@role_required(Role.VIEWER)
def audit_export(request: HtmxHttpRequest):
    """Streams every matching event (not just one page) as CSV, oldest first."""
    form = AuditFilterForm(request.GET or None)
    events = audit_events(form.filters()).order_by("seq")
    writer = csv.writer(_Echo())

    def rows():
        yield writer.writerow(CSV_COLUMNS)
        for event in events.iterator(chunk_size=1000):
            values = []
            for column in CSV_COLUMNS:
                value = getattr(event, column)
                values.append(json.dumps(value, sort_keys=True) if column in ("params", "before", "after") else value)
            yield writer.writerow([spreadsheet_safe(v) for v in values])

    response = StreamingHttpResponse(rows(), content_type="text/csv")
    response["Content-Disposition"] = 'attachment; filename="audit.csv"'
    return response


@require_GET
@role_required(Role.VIEWER)
def audit_export_jsonl(request: HtmxHttpRequest):
    """Streams every matching event as JSON lines, oldest first: each line the object the witness topic holds
    (console.witness.records), so an export can be checked against the topic or the key."""
    form = AuditFilterForm(request.GET or None)
    events = audit_events(form.filters()).order_by("seq")
    lines = (event_json(event) + "\n" for event in events.iterator(chunk_size=1000))
    response = StreamingHttpResponse(lines, content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="audit.jsonl"'
    return response
