"""Imports from the page run in a Celery worker, not in the web request: the upload is kept in IMPORT_DIR, a job row
says how far the worker got (the page polls it), and a job whose worker dies is failed and audited by the reaper
in beat instead of staying "running". The write itself is records_import (records/imports.py), as in the shell.

No function here imports the task module: the job is sent by the task's name, so the task can import this one."""

from __future__ import annotations

import logging
import os
import threading
import uuid
from datetime import timedelta
from pathlib import Path

from celery import current_app
from django.db import transaction
from django.utils import timezone

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.services import audit_record
from console.errors import ConsoleError, NotFound
from records.conf import import_dir, import_queue_wait_s, import_silence_s
from records.imports import IMPORT_ACTION, ImportReport, check_import, records_import
from records.models import ImportJob

log = logging.getLogger(__name__)
TASK = "records.tasks.run_import"
HEARTBEAT_S = 2.0
MSG_REASON = "Say why: the reason goes into the audit log."
MSG_QUEUE_DOWN = "The import could not be queued: the task queue (Redis) did not answer ({error}). Nothing was written."
MSG_CANCELLED = "Cancelled by {who} after {written} record(s) were written."
MSG_WORKER_GONE = ("The worker running this import stopped reporting (no heartbeat for {silent:.0f} s): it was killed "
                   "or its machine went away, after {written} record(s) were written.")
MSG_NEVER_TAKEN = "No worker took this import within {wait:.0f} s (is a Celery worker running?). Nothing was written."
MSG_FILE_GONE = "The uploaded file is no longer in {folder} (is IMPORT_DIR shared by the web and worker processes?)."
MSG_NO_JOB = "There is no import #{job} into {cluster}/{topic}."
MSG_FINISHED = "Import #{job} already ended ({state})."


def import_submit(*, actor: Actor, cluster: str, topic: str, kind: str, chunks, file_name: str, rate: int,
                  skip_bad: bool = False, key_subject: str = "", value_subject: str = "",
                  keep_partitions: bool = True, keep_timestamps: bool = True, reason: str) -> ImportJob:
    """Keeps the upload (`chunks`: its bytes, piece by piece) and queues its import. Refused before anything is
    kept: an unknown format, a rate past the limit, no reason."""
    check_import(kind, rate)
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    folder = Path(import_dir())
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{uuid.uuid4().hex}.upload"
    size = 0
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
        for chunk in chunks:
            out.write(chunk)
            size += len(chunk)
    job = ImportJob.objects.create(
        cluster=cluster, topic=topic, kind=kind, file_name=file_name[:255], path=str(path), size=size,
        params={"rate": rate, "skip_bad": skip_bad, "key_subject": key_subject, "value_subject": value_subject,
                "keep_partitions": keep_partitions, "keep_timestamps": keep_timestamps},
        reason=reason, user=actor.user, actor_name=actor.name, remote_addr=actor.remote_addr)
    try:
        current_app.send_task(TASK, args=[job.pk], retry=False)  # Redis down: say so now, not after retries
    except Exception as exc:  # noqa: BLE001 - kombu raises several connection error types
        _end(job.pk, ImportJob.State.FAILED, error=MSG_QUEUE_DOWN.format(error=type(exc).__name__))
        raise ConsoleError(MSG_QUEUE_DOWN.format(error=type(exc).__name__)) from exc
    return job


def _actor(job: ImportJob) -> Actor:
    return Actor(user=job.user, source="web", remote_addr=job.remote_addr)


def _end(job_id: int, state: str, *, error: str = "", report: dict | None = None) -> None:
    """Ends the job unless it ended meanwhile: a worker back after the reaper failed its job leaves the job, and
    the failure the reaper audited, as they are."""
    job = ImportJob.objects.get(pk=job_id)
    fields = {"state": state, "error": error, "finished_at": timezone.now()}
    if report is not None:
        fields["report"] = report
    ImportJob.objects.filter(pk=job_id, state__in=[ImportJob.State.QUEUED, ImportJob.State.RUNNING]).update(**fields)
    Path(job.path).unlink(missing_ok=True)


def import_job_run(*, job_id: int) -> ImportJob:
    """Runs a queued import (the worker's task). Only one worker runs a job: it moves from queued to running once."""
    if not ImportJob.objects.filter(pk=job_id, state=ImportJob.State.QUEUED).update(
            state=ImportJob.State.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now()):
        return ImportJob.objects.get(pk=job_id)
    job = ImportJob.objects.get(pk=job_id)
    beating = threading.Event()

    def heartbeat() -> None:  # its own thread: a slow batch or a long run of bad lines is not a dead worker
        while not beating.wait(HEARTBEAT_S):
            ImportJob.objects.filter(pk=job_id, state=ImportJob.State.RUNNING).update(heartbeat_at=timezone.now())

    read = {"file": None}

    def progress(report: ImportReport) -> None:
        # How far into the file the reader is (it reads ahead a little): the page's share done.
        position = read["file"].tell() if read["file"] is not None else 0
        ImportJob.objects.filter(pk=job_id).update(report={**report.as_json(), "bytes_read": position})
        cancelled_by = ImportJob.objects.filter(pk=job_id).values_list("cancelled_by", flat=True).first()
        if cancelled_by:
            raise ConsoleError(MSG_CANCELLED.format(who=cancelled_by, written=report.records))

    def audit_started(correlation_id: uuid.UUID) -> None:
        ImportJob.objects.filter(pk=job_id).update(correlation_id=correlation_id)

    thread = threading.Thread(target=heartbeat, daemon=True, name=f"import-{job_id}-heartbeat")
    thread.start()
    try:
        if not Path(job.path).is_file():
            raise ConsoleError(MSG_FILE_GONE.format(folder=Path(job.path).parent))
        with open(job.path, "rb") as source:
            read["file"] = source
            report = records_import(
                actor=_actor(job), cluster=job.cluster, topic=job.topic, kind=job.kind, source=source,
                rate=job.params["rate"], skip_bad=job.params["skip_bad"], key_subject=job.params["key_subject"],
                value_subject=job.params["value_subject"],
                keep_partitions=job.params.get("keep_partitions", True),
                keep_timestamps=job.params.get("keep_timestamps", True), reason=job.reason,
                file_name=job.file_name, progress=progress, on_audit=audit_started)
    except Exception as exc:  # noqa: BLE001 - whatever ended it, the job says so and its file goes
        message = getattr(exc, "message", "") or f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, ConsoleError):
            log.exception("Import #%s failed", job_id)
        _end(job_id, ImportJob.State.FAILED, error=message)
    else:
        _end(job_id, ImportJob.State.DONE, report={**report.as_json(), "bytes_read": job.size})
    finally:
        beating.set()
        thread.join(timeout=HEARTBEAT_S + 1)
    return ImportJob.objects.get(pk=job_id)


def import_job_cancel(*, actor: Actor, cluster: str, topic: str, job_id: int) -> ImportJob:
    """Asks the worker to stop after the batch it is writing; a queued job ends at once."""
    job = import_job_get(cluster, topic, job_id)
    if job.finished:
        raise ConsoleError(MSG_FINISHED.format(job=job.pk, state=job.state))
    ImportJob.objects.filter(pk=job.pk).update(cancelled_by=actor.name)
    if ImportJob.objects.filter(pk=job.pk, state=ImportJob.State.QUEUED).update(
            state=ImportJob.State.FAILED, error=MSG_CANCELLED.format(who=actor.name, written=0),
            finished_at=timezone.now()):
        Path(job.path).unlink(missing_ok=True)
    audit_record(actor=actor, action="records.import.cancel", outcome=AuditEvent.Outcome.SUCCESS,
                 cluster=job.cluster, target=f"topic:{job.topic}", params={"job": job.pk},
                 correlation_id=job.correlation_id)
    return ImportJob.objects.get(pk=job.pk)


def import_job_get(cluster: str, topic: str, job_id: int) -> ImportJob:
    job = ImportJob.objects.filter(pk=job_id, cluster=cluster, topic=topic).first()
    if job is None:
        raise NotFound(MSG_NO_JOB.format(job=job_id, cluster=cluster, topic=topic))
    return job


def recent_imports(cluster: str, topic: str, count: int = 5) -> list[ImportJob]:
    """The topic's newest imports started from the page, newest first."""
    return list(ImportJob.objects.filter(cluster=cluster, topic=topic).order_by("-created_at")[:count])


def import_jobs_reap(*, now=None) -> list[int]:
    """Fails running imports whose worker stopped its heartbeat (audited as failures of their import, with the
    count written so far) and queued ones no worker took in time; returns their ids. Run by beat."""
    now = now or timezone.now()
    reaped = []
    silence, wait = timedelta(seconds=import_silence_s()), timedelta(seconds=import_queue_wait_s())
    for job in ImportJob.objects.filter(state__in=[ImportJob.State.RUNNING, ImportJob.State.QUEUED]):
        if job.state == ImportJob.State.QUEUED:
            if now - job.created_at < wait:
                continue
            error = MSG_NEVER_TAKEN.format(wait=wait.total_seconds())
        else:
            last = job.heartbeat_at or job.started_at or job.created_at
            if now - last < silence:
                continue
            error = MSG_WORKER_GONE.format(silent=(now - last).total_seconds(),
                                           written=job.report.get("records", 0))
        # One reaper wins: the state moves only from where it was seen; the failure and its audit event are
        # written together, so whoever sees the job failed finds both.
        with transaction.atomic():
            if not ImportJob.objects.filter(pk=job.pk, state=job.state, heartbeat_at=job.heartbeat_at).update(
                    state=ImportJob.State.FAILED, error=error, finished_at=now):
                continue
            if job.correlation_id is not None:  # its audit intent is written: close it
                audit_record(actor=_actor(job), action=IMPORT_ACTION, outcome=AuditEvent.Outcome.FAILURE,
                             cluster=job.cluster, target=f"topic:{job.topic}", reason=job.reason,
                             params={"job": job.pk, "source": job.file_name}, after=job.report, error=error,
                             correlation_id=job.correlation_id)
        Path(job.path).unlink(missing_ok=True)
        reaped.append(job.pk)
    return reaped
