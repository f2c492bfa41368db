"""The import page: a file in, a preview (first records, target partitions, bad lines), then the import, which a
Celery worker runs while the page shows its progress (records/import_jobs.py)."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.http import HtmxHttpRequest, valid_data
from console.uploads import upload_refusal
from records.conf import import_max_bytes
from records.forms import ImportForm
from records.import_jobs import import_job_cancel, import_job_get, import_submit, recent_imports
from records.imports import import_preview

MSG_TOO_LARGE = "The file is larger than the {limit} bytes an import accepts (IMPORT_MAX_BYTES); use the shell."


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def topic_import(request: HtmxHttpRequest, cluster: str, topic: str):
    """GET: the form; POST with `preview`: the file read and checked, nothing written; POST: the import."""
    cluster_get(cluster)
    form = ImportForm(request.POST or None, request.FILES or None)
    context = {"cluster": cluster, "topic_name": topic, "form": form, "preview": None, "job": None,
               "recent": recent_imports(cluster, topic)}
    if request.method == "POST":
        if upload_refusal(request):  # refused while it streamed in: nothing of it was kept
            raise ConsoleError(upload_refusal(request))
        data = valid_data(form)
        upload = data["file"]
        if upload.size > import_max_bytes():
            raise ConsoleError(MSG_TOO_LARGE.format(limit=import_max_bytes()))
        common = dict(cluster=cluster, topic=topic, kind=form.kind(), key_subject=data["key_subject"],
                      value_subject=data["value_subject"], keep_partitions=not data["repartition"],
                      keep_timestamps=not data["new_timestamps"])
        if "preview" in request.POST:
            upload.seek(0)
            context["preview"] = import_preview(**common, source=upload)
        else:
            context["job"] = import_submit(**common, actor=Actor.from_request(request), chunks=upload.chunks(),
                                           file_name=upload.name, rate=data["rate"], skip_bad=data["skip_bad"],
                                           reason=data["reason"])
        if request.htmx:
            return render(request, "records/import.html#import-result", context)
    return render(request, "records/import.html", context)


@require_GET
@role_required(Role.OPERATOR)
def import_status(request: HtmxHttpRequest, cluster: str, topic: str, job_id: int):
    """The job's progress; the partial asks again every second until the job has ended."""
    cluster_get(cluster)
    context = {"cluster": cluster, "topic_name": topic, "job": import_job_get(cluster, topic, job_id)}
    return render(request, "records/import.html#import-job", context)


@require_POST
@role_required(Role.OPERATOR)
def import_cancel(request: HtmxHttpRequest, cluster: str, topic: str, job_id: int):
    cluster_get(cluster)
    job = import_job_cancel(actor=Actor.from_request(request), cluster=cluster, topic=topic, job_id=job_id)
    return render(request, "records/import.html#import-job", {"cluster": cluster, "topic_name": topic, "job": job})
