"""The import page: a file in, a preview (first records, target partitions, bad lines), then the import."""

from __future__ import annotations

import io

from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.http import HtmxHttpRequest, valid_data
from records.conf import import_max_bytes
from records.forms import ImportForm
from records.imports import import_preview, records_import

MSG_TOO_LARGE = "The file is larger than the {limit} bytes an import accepts (IMPORT_MAX_BYTES); use the shell."
MSG_REASON = "Say why: the reason goes into the audit log."


def _lines(upload):
    upload.seek(0)
    # newline="" keeps a CSV cell's own line breaks for the CSV reader, and is harmless for JSON lines.
    return io.TextIOWrapper(upload, encoding="utf-8", errors="replace", newline="")


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def topic_import(request: HtmxHttpRequest, cluster: str, topic: str):
    """GET: the form; POST with `preview`: the file read and checked, nothing written; POST: the import."""
    cluster_get(cluster)
    form = ImportForm(request.POST or None, request.FILES or None)
    context = {"cluster": cluster, "topic_name": topic, "form": form, "preview": None, "done": None}
    if request.method == "POST":
        data = valid_data(form)
        upload = data["file"]
        if upload.size > import_max_bytes():
            raise ConsoleError(MSG_TOO_LARGE.format(limit=import_max_bytes()))
        common = dict(cluster=cluster, topic=topic, kind=form.kind(), key_subject=data["key_subject"],
                      value_subject=data["value_subject"])
        if "preview" in request.POST:
            context["preview"] = import_preview(**common, lines=_lines(upload))
        else:
            if not data["reason"].strip():
                raise ConsoleError(MSG_REASON)
            context["done"] = records_import(**common, actor=Actor.from_request(request), lines=_lines(upload),
                                             rate=data["rate"], skip_bad=data["skip_bad"], reason=data["reason"],
                                             source=upload.name)
        if request.htmx:
            return render(request, "records/import.html#import-result", context)
    return render(request, "records/import.html", context)
