"""Replay pages: submit, list, the job page with live progress, cancel, log and file downloads."""

from __future__ import annotations

from pathlib import Path

from django.contrib import messages
from django.http import FileResponse, Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from changes.proposals import proposed_response
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError, PermissionRefused
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from masking.selectors import masker_for
from sparkjobs import outputs, services
from sparkjobs.asking import replay_proposal
from sparkjobs.forms import ReplayForm, initial_from_query
from sparkjobs.models import ReplayJob
from sparkjobs.selectors import replay_choices

LOG_TAIL_LINES = 60
MSG_FILES_UNMASKED = ("These files were written without the masking rules that apply to your role on this topic: "
                      "replay the range yourself, and the files are masked for you.")


def masked_enough(job: ReplayJob, masker) -> bool:
    """A reader may download a job's files when no rule masks the topic for them, or when the job's files were
    masked with every rule that does (a job keeps the rules it was masked with)."""
    if not masker:
        return True
    return all(rule.as_dict() in (job.masking or []) for rule in masker.rules)


@require_GET
@role_required(Role.VIEWER)
def replay_list(request: HtmxHttpRequest, cluster: str):
    cluster_get(cluster)
    jobs = ReplayJob.objects.filter(cluster=cluster)[:100]
    return render(request, "sparkjobs/list.html", {"cluster": cluster, "jobs": jobs})


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def replay_new(request: HtmxHttpRequest, cluster: str):
    """GET: the form, filled from a link (other pages link here with a range); asked again by the form itself
    when another topic is chosen, it answers with the topic's partitions and offsets. POST: submit."""
    cluster_get(cluster)
    if request.method == "POST":
        data = valid_data(ReplayForm(request.POST))
        change = replay_proposal(
            actor=Actor.from_request(request), cluster=cluster, topic=data["topic"], partitions=data["partitions"],
            start=data["start"], end=data["end"], sink=data["sink"], sink_topic=data["sink_topic"],
            sink_cluster=data["sink_cluster"], keep_partitions=data["keep_partitions"],
            filter_expr=data["filter_expr"], isolation=data["isolation"], reason=data["reason"])
        if change is not None:
            return proposed_response(request, change)
        job = services.replay_submit(
            actor=Actor.from_request(request), cluster=cluster, topic=data["topic"], partitions=data["partitions"],
            start=data["start"], end=data["end"], sink=data["sink"], sink_topic=data["sink_topic"],
            sink_cluster=data["sink_cluster"], keep_partitions=data["keep_partitions"],
            filter_expr=data["filter_expr"], isolation=data["isolation"], output_uri=data["output_uri"],
            reason=data["reason"])
        messages.success(request, f"Replay #{job.pk} queued: {job.planned_records} records planned.")
        return redirect_after_change(request, reverse("sparkjobs:detail", args=[cluster, job.pk]))
    initial, table = initial_from_query(request.GET)
    choices = replay_choices(cluster, initial["topic"].strip())
    form = ReplayForm(initial=initial, partitions=[p.partition for p in choices.partitions])
    rows = [(span, table["start"].get(span.partition, ""), table["end"].get(span.partition, ""))
            for span in choices.partitions]
    context = {"cluster": cluster, "form": form, "choices": choices, "offset_rows": rows}
    if request.htmx:
        return render(request, "sparkjobs/new.html#bounds", context)
    return render(request, "sparkjobs/new.html", context)


def _log_tail(job: ReplayJob) -> str:
    if not job.log_path or not Path(job.log_path).exists():
        return ""
    return "".join(Path(job.log_path).read_text(errors="replace").splitlines(keepends=True)[-LOG_TAIL_LINES:])


def _files(job: ReplayJob) -> tuple[list[outputs.OutputFile], str]:
    """(files, why they could not be listed): an object store that does not answer leaves the page usable."""
    if not job.finished:  # listing an object store every second while Spark writes would show half a job
        return [], ""
    try:
        return outputs.output_files(job), ""
    except ConsoleError as exc:
        return [], exc.message


@require_GET
@role_required(Role.VIEWER)
def replay_detail(request: HtmxHttpRequest, cluster: str, job_id: int):
    job = get_object_or_404(ReplayJob, pk=job_id, cluster=cluster)
    files, files_error = _files(job)
    context = {"cluster": cluster, "job": job, "log_tail": _log_tail(job), "files": files,
               "files_error": files_error}
    if request.htmx:
        response = render(request, "sparkjobs/detail.html#job-status", context)
        # The job ended: this is the last refresh, so the page stops polling.
        return HttpResponseStopPolling(response.content) if job.finished else response
    return render(request, "sparkjobs/detail.html", context)


@require_POST
@role_required(Role.OPERATOR)
def replay_cancel(request: HtmxHttpRequest, cluster: str, job_id: int):
    get_object_or_404(ReplayJob, pk=job_id, cluster=cluster)
    services.replay_cancel(actor=Actor.from_request(request), job_id=job_id, reason=request.POST.get("reason", ""))
    messages.success(request, f"Cancel of replay #{job_id} requested: the Spark driver is being stopped.")
    return redirect_after_change(request, reverse("sparkjobs:detail", args=[cluster, job_id]))


@require_GET
@role_required(Role.VIEWER)
def replay_file(request: HtmxHttpRequest, cluster: str, job_id: int, name: str):
    job = get_object_or_404(ReplayJob, pk=job_id, cluster=cluster)
    if not masked_enough(job, masker_for(cluster, job.topic, request.user)):
        raise PermissionRefused(MSG_FILES_UNMASKED)
    try:
        chunks = outputs.output_open(job, name)
    except ConsoleError as exc:
        raise Http404(exc.message) from exc
    if chunks is None:
        raise Http404("No such file in this replay's output.")
    content_type = {".jsonl": "application/x-ndjson", ".parquet": "application/vnd.apache.parquet"}.get(
        Path(name).suffix, "application/octet-stream")
    response = StreamingHttpResponse(chunks, content_type=content_type)
    # The name comes from the listing (Spark's part-… names), never from the request alone.
    response["Content-Disposition"] = content_disposition_header(True, f"replay-{job.pk}-{name}")
    return response


@require_GET
@role_required(Role.VIEWER)
def replay_log(request: HtmxHttpRequest, cluster: str, job_id: int):
    job = get_object_or_404(ReplayJob, pk=job_id, cluster=cluster)
    if not job.log_path or not Path(job.log_path).exists():
        raise Http404("This replay has no log yet.")
    return FileResponse(open(job.log_path, "rb"), as_attachment=True, filename=f"replay-{job.pk}.log")
