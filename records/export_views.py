"""The export download: the search form's query string and a format in, a streamed file out."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import StreamingHttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.http import HtmxHttpRequest, safe_filename, valid_data
from masking.apply import check_search
from masking.selectors import masker_for
from records.conf import export_spark_above
from records.export import export_begin, export_spec, records_export
from records.export_formats import FORMATS
from records.forms import ExportForm
from records.search import SearchState

EXPORT_LIMIT_DEFAULT = 100_000


@require_GET
@role_required(Role.VIEWER)
def topic_export(request: HtmxHttpRequest, cluster: str, topic: str):
    cluster_get(cluster)
    form = ExportForm(request.GET)
    data = valid_data(form)
    fmt = data["format"] or "jsonl"
    spec = export_spec(form.spec(topic), data["max_matches"] or EXPORT_LIMIT_DEFAULT)
    masker = masker_for(cluster, topic, request.user)
    check_search(masker, spec.filter)
    state = export_begin(cluster, spec, fmt)
    stream = records_export(actor=Actor.from_request(request), state=state, fmt=fmt, masker=masker)
    content_type, extension = FORMATS[fmt]
    response = StreamingHttpResponse(stream, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{safe_filename(topic)}{extension}"'
    response["X-Accel-Buffering"] = "no"  # a proxy in front passes the chunks on as they come
    return response


def export_links(cluster: str, topic: str, query: dict, state: SearchState | None = None) -> dict:
    """The download links of a result (its query string and each format) and, for a large range, the replay
    form filled with the same range."""
    base = {k: v for k, v in query.items() if k not in ("format", "state", "run")}
    links = {name: reverse("records:export", args=[cluster, topic]) + "?" + urlencode({**base, "format": name})
             for name in FORMATS}
    replay = ""
    if state is not None and state.total > export_spark_above():
        ranges = [c for c in state.cursors if c.high > c.low]
        replay = reverse("sparkjobs:new", args=[cluster]) + "?" + urlencode({
            "topic": topic, "partitions": ",".join(str(c.partition) for c in ranges),
            "start": "offsets:" + ",".join(f"{c.partition}={c.low}" for c in ranges),
            "end": "offsets:" + ",".join(f"{c.partition}={c.high}" for c in ranges), "sink": "jsonl"})
    return {"links": links, "replay": replay}
