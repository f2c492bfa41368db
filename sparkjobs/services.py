"""Replay jobs: submit (bounds resolved, audited), run (spark-submit, watched), cancel."""

from __future__ import annotations

import socket
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from changes.guard import change_guard
from console.audit.guarded import MSG_REASON
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.services import audit_record, audit_refusal
from console.witness.guard import witness_topic_guard
from console.clusters.selectors import cluster_connection, cluster_get
from console.errors import Conflict, ConsoleError, PermissionRefused
from gateway.kafka.java.config import UntranslatableConfig, java_client_config
from gateway.secret_files import write_secret_file
from masking.conf import hash_key as mask_hash_key
from masking.selectors import masker_for
from sparkjobs import queue, runner, s3
from sparkjobs.filters import filter_check, filter_spark_sql
from sparkjobs.jobs.replay_spec import FileSink, KafkaSource, Registry, ReplaySpec, TopicSink
from sparkjobs.models import ReplayJob
from sparkjobs.selectors import resolve_range

MSG_NOTHING_TO_REPLAY = "The range holds no records: nothing to replay."
MSG_SINK_TOPIC = "Name the topic to write to."
MSG_SAME_TOPIC = "Writing a replay into the topic it reads from would replay forever; choose another topic."
MSG_ISOLATION = "Isolation is read_committed or read_uncommitted, not '{isolation}'."
MSG_OUTPUT_FOR_TOPIC = "An output location is for file sinks; a topic sink writes to its topic."
MSG_MASKED = ("Masking rules hide parts of {topic}'s records from your role: {what}. Replay to files (JSON lines or "
              "Parquet), which are written masked, or ask an admin.")
MASKED_REFUSALS = {"topic": "a replay into a topic would copy them unmasked",
                   "filter": "a filter could select records by what they hide"}


def replay_mask_check(actor: Actor, cluster: str, topic: str, sink: str, filter_expr: str, reason: str) -> list[dict]:
    """The rules that mask this topic for the actor, as the job keeps them; an audited refusal for what would
    let masked values out."""
    masker = masker_for(cluster, topic, actor.user)
    if not masker:
        return []
    why = "topic" if sink == ReplayJob.Sink.TOPIC else "filter" if filter_expr.strip() else ""
    if why:
        message = MSG_MASKED.format(topic=topic, what=MASKED_REFUSALS[why])
        audit_refusal(actor=actor, action="replay.run", cluster=cluster, target=f"topic:{topic}", reason=reason,
                      params={"sink": sink, "filter": filter_expr, "masked": True}, error=message)
        raise PermissionRefused(message)
    return [rule.as_dict() for rule in masker.rules]


def replay_submit(*, actor: Actor, cluster: str, topic: str, partitions: list[int] | None, start: str, end: str,
                  sink: str, sink_topic: str = "", sink_cluster: str = "", keep_partitions: bool = False,
                  filter_expr: str = "", isolation: str = ReplayJob.Isolation.READ_COMMITTED, output_uri: str = "",
                  reason: str) -> ReplayJob:
    """Resolves the bounds to offsets now, records the job and its audit intent, and queues it after commit.
    File sinks write to a new folder `replay-<id>` under REPLAY_OUTPUT_DIR, or under `output_uri`
    (s3a://BUCKET/PREFIX) when given."""
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    if sink not in ReplayJob.Sink.values:
        raise ConsoleError(f"Unknown sink '{sink}'.")
    if isolation not in ReplayJob.Isolation.values:
        raise ConsoleError(MSG_ISOLATION.format(isolation=isolation))
    mask_rules = replay_mask_check(actor, cluster, topic, sink, filter_expr, reason)
    location = None
    if output_uri.strip():
        if sink == ReplayJob.Sink.TOPIC:
            raise ConsoleError(MSG_OUTPUT_FOR_TOPIC)
        location = s3.parse_s3a(output_uri)
        s3.credentials()  # keys missing here are missing for the worker too: say so now, not after Spark started
    if sink == ReplayJob.Sink.TOPIC:
        if not sink_topic:
            raise ConsoleError(MSG_SINK_TOPIC)
        target_cluster = sink_cluster or cluster
        cluster_get(target_cluster)
        if sink_topic == topic and target_cluster == cluster:
            raise ConsoleError(MSG_SAME_TOPIC)
        witness_topic_guard(actor=actor, action="replay.run", cluster=target_cluster, topic=sink_topic,
                            what="replay into", reason=reason, params={"sink": sink, "source": f"{cluster}/{topic}"})
        # A protected destination takes a replay only as an approved change request (changes/actions/replays.py).
        change_guard(actor=actor, action="replay.run", cluster=target_cluster, target=f"topic:{sink_topic}",
                     reason=reason, params={"sink": sink, "source": f"{cluster}/{topic}"})
        from console.clusters.selectors import cluster_admin

        cluster_admin(target_cluster).describe_topics([sink_topic])  # TopicNotFound now, not in Spark later
    filter_expr = filter_check(filter_expr)
    resolved = resolve_range(cluster, topic, partitions, start, end, isolation=isolation)
    if resolved.planned == 0:
        raise ConsoleError(MSG_NOTHING_TO_REPLAY)
    with transaction.atomic():
        job = ReplayJob.objects.create(
            cluster=cluster, topic=topic, start_spec=start, end_spec=end,
            ranges={str(p): list(r) for p, r in resolved.ranges.items()}, planned_records=resolved.planned,
            filter_expr=filter_expr, isolation=isolation, sink=sink, sink_topic=sink_topic, sink_cluster=sink_cluster or "",
            keep_partitions=keep_partitions, reason=reason, created_by=actor.user, masking=mask_rules,
        )
        if location is not None:
            job.output_dir = location.child(f"replay-{job.pk}").uri
        elif sink != ReplayJob.Sink.TOPIC:
            job.output_dir = str(Path(settings.REPLAY_OUTPUT_DIR) / f"replay-{job.pk}")
        intent = audit_record(actor=actor, action="replay.run", outcome=AuditEvent.Outcome.INTENT, cluster=cluster,
                              target=f"topic:{topic}", reason=reason, params=_spec_params(job))
        job.correlation_id = intent.correlation_id
        job.save(update_fields=["output_dir", "correlation_id"])
        transaction.on_commit(lambda: _enqueue(job.pk))
    job.refresh_from_db()
    if job.state == ReplayJob.State.FAILED:
        raise ConsoleError(job.error)
    return job


MSG_QUEUE_DOWN = "Replay #{job} could not be queued: the task queue (Redis) did not answer ({error})."


def _enqueue(job_id: int) -> None:
    try:
        queue.send(job_id)
    except Exception as exc:  # kombu raises several connection error types
        job = ReplayJob.objects.get(pk=job_id)
        _finish(job, {"state": "failed", "result": None,
                      "error": MSG_QUEUE_DOWN.format(job=job_id, error=type(exc).__name__)})


def _spec_params(job: ReplayJob) -> dict:
    return {"job": job.pk, "start": job.start_spec, "end": job.end_spec, "ranges": job.ranges,
            "planned_records": job.planned_records, "filter": job.filter_expr, "isolation": job.isolation,
            "sink": job.sink,
            "sink_topic": job.sink_topic, "sink_cluster": job.sink_cluster, "keep_partitions": job.keep_partitions,
            "output_dir": job.output_dir, "masked": bool(job.masking)}


def _application_spec(job: ReplayJob) -> ReplaySpec:
    source = cluster_connection(cluster_get(job.cluster))
    sink: TopicSink | FileSink
    if job.sink == ReplayJob.Sink.TOPIC:
        target = cluster_connection(cluster_get(job.sink_cluster or job.cluster))
        sink = TopicSink(topic=job.sink_topic, bootstrap=target.bootstrap_servers, config=dict(target.config),
                         keep_partitions=job.keep_partitions)
    else:
        # With a registry, Parquet gets typed columns from the range's Avro and Protobuf schemas (jobs/replay.py).
        sink = FileSink(kind=job.sink, path=job.output_dir,
                        typed=job.sink == ReplayJob.Sink.PARQUET and bool(source.registry_url),
                        hadoop=s3.spark_options() if s3.is_s3a(job.output_dir) else {})
    return ReplaySpec(
        job_id=job.pk, job_key=f"{job.pk}-{job.correlation_id.hex[:12]}", topic=job.topic,
        ranges={int(p): (start, end) for p, (start, end) in job.ranges.items()},
        # Spark gets the SQL regenerated from the checked tree, checked again under today's allowlist.
        filter=filter_spark_sql(job.filter_expr), isolation=job.isolation,
        kafka_timeout_ms=int(settings.REPLAY_KAFKA_TIMEOUT_S * 1000),
        # Spark's Kafka source is Kafka's Java client; the topic sink writes with librdkafka (see spark_sink).
        source=KafkaSource(source.bootstrap_servers, java_client_config(source.config)),
        sink=sink,
        # Decoded key and value columns for the filter and the JSON-lines sink.
        registry=Registry(source.registry_url, dict(source.registry_config)) if source.registry_url else None,
        # Tests only: a task dies mid-write, then retries.
        crash_first_attempt_after=(settings.REPLAY_FAULT_CRASH_AFTER
                                   if settings.DEBUG and settings.REPLAY_FAULT_CRASH_AFTER else None),
        mask_rules=tuple(job.masking or ()), mask_hash_key=(mask_hash_key() or b"").decode())


def replay_run(*, job_id: int) -> ReplayJob:
    """Runs a queued job to its end (called by the Celery task); writes the audit outcome."""
    job = ReplayJob.objects.get(pk=job_id)
    if job.state != ReplayJob.State.QUEUED:
        return job
    if job.cancel_requested:
        return _finish(job, {"state": "cancelled", "result": None, "error": "Cancelled before it started."})
    work = Path(settings.REPLAY_OUTPUT_DIR) / "jobs" / str(job.pk)
    work.mkdir(parents=True, exist_ok=True)
    spec_path = work / "spec.json"
    try:
        spec = _application_spec(job)
    except (ConsoleError, UntranslatableConfig) as exc:  # a secret gone from the environment, a setting Java lacks
        return _finish(job, {"state": "failed", "result": None, "error": str(getattr(exc, "message", exc))})
    write_secret_file(spec_path, spec.to_json())  # S3 keys, a JAAS password: readable by the worker only
    job.state, job.started_at, job.log_path = ReplayJob.State.RUNNING, timezone.now(), str(work / "spark.log")
    job.heartbeat_at, job.worker_host = job.started_at, socket.gethostname()
    job.save(update_fields=["state", "started_at", "log_path", "heartbeat_at", "worker_host"])

    def on_progress(done: int) -> None:
        ReplayJob.objects.filter(pk=job.pk).update(progress_done=done)

    def on_start(pid: int) -> None:
        ReplayJob.objects.filter(pk=job.pk).update(driver_pid=pid)

    def should_cancel() -> bool:  # every second: also the heartbeat that tells the reaper this worker lives
        ReplayJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())
        return ReplayJob.objects.filter(pk=job.pk, cancel_requested=True).exists()

    try:
        outcome = runner.run(spec_path, Path(job.log_path), on_progress=on_progress,
                             should_cancel=should_cancel, on_start=on_start)
    except (OSError, RuntimeError) as exc:
        outcome = {"state": "failed", "result": None, "error": str(exc)}
    finally:
        spec_path.unlink(missing_ok=True)
    job.refresh_from_db()
    if job.finished:  # the reaper gave up on this worker meanwhile and already audited how the job ended
        return job
    return _finish(job, outcome)


def _finish(job: ReplayJob, outcome: dict) -> ReplayJob:
    _end(job, outcome)
    return job


def _end(job: ReplayJob, outcome: dict) -> bool:
    """Ends the job as `outcome` says, unless it left the state the caller read meanwhile (a reaper ended it while
    its worker was silent, or the worker came back while a reaper stopped its driver): a job ends once, and its
    end and audit event are written together, so whoever sees it ended (a page, `replay --wait`) finds both.
    Returns whether this call ended it; `job` is as stored either way."""
    result = outcome.get("result") or {}
    ended = {"state": outcome["state"], "error": outcome.get("error", ""), "records_read": result.get("read"),
             "records_written": result.get("written"), "records_aborted": result.get("aborted"),
             "transaction_markers": result.get("markers"), "finished_at": timezone.now()}
    if ended["state"] == ReplayJob.State.SUCCEEDED:
        ended["progress_done"] = job.planned_records
    with transaction.atomic():
        unended = ReplayJob.objects.filter(pk=job.pk, state=job.state).exclude(state__in=ReplayJob.FINISHED)
        if not unended.update(**ended):
            job.refresh_from_db()
            return False
        for name, value in ended.items():
            setattr(job, name, value)
        audit_record(
            actor=Actor(user=job.created_by, source="system"), action="replay.run",
            outcome=(AuditEvent.Outcome.SUCCESS if job.state == ReplayJob.State.SUCCEEDED
                     else AuditEvent.Outcome.FAILURE),
            cluster=job.cluster, target=f"topic:{job.topic}", reason=job.reason, params=_spec_params(job),
            after={"state": job.state, "read": job.records_read, "written": job.records_written,
                   "aborted": job.records_aborted, "transaction_markers": job.transaction_markers,
                   "files": result.get("files", [])}, error=job.error, correlation_id=job.correlation_id,
        )
    return True


MSG_WORKER_GONE = ("The worker running this replay stopped reporting (no heartbeat for {silent:.0f} s): it was killed or "
                   "its machine went away. {driver}")
MSG_DRIVER_STOPPED = "Its Spark job was stopped."
MSG_DRIVER_ELSEWHERE = "Its Spark driver ran on {host}; check there that it stopped."


def replay_reap_orphans(*, now=None) -> list[int]:
    """Fails every running job whose worker stopped sending heartbeats, stops its driver if it runs on this
    machine, and audits the outcome; returns the job ids. Run by Celery beat and by the worker at start."""
    now = now or timezone.now()
    timeout = timedelta(seconds=settings.REPLAY_HEARTBEAT_TIMEOUT_S)
    reaped = []
    for job in ReplayJob.objects.filter(state=ReplayJob.State.RUNNING):
        last = job.heartbeat_at or job.started_at or job.created_at
        if now - last < timeout:
            continue
        # One reaper wins: it takes the heartbeat the worker stopped giving, so the others see the job as alive
        # while it stops the driver; the job stays running until _finish ends it with its error and audit event,
        # and is reaped again later if this reaper dies first.
        if not ReplayJob.objects.filter(pk=job.pk, state=ReplayJob.State.RUNNING,
                                        heartbeat_at=job.heartbeat_at).update(heartbeat_at=now):
            continue
        driver = ""
        if job.driver_pid:
            if job.worker_host == socket.gethostname():
                driver = MSG_DRIVER_STOPPED if runner.stop_orphan(job.driver_pid, job.pk) else ""
            else:
                driver = MSG_DRIVER_ELSEWHERE.format(host=job.worker_host)
        error = MSG_WORKER_GONE.format(silent=(now - last).total_seconds(), driver=driver).strip()
        if _end(job, {"state": "failed", "result": None, "error": error}):  # not if its worker ended it after all
            reaped.append(job.pk)
    return reaped


def replay_cancel(*, actor: Actor, job_id: int, reason: str = "") -> ReplayJob:
    """Asks the worker to stop the Spark driver; the job ends as cancelled within seconds."""
    job = ReplayJob.objects.get(pk=job_id)
    if job.finished:
        raise Conflict(f"Replay #{job.pk} already ended ({job.state}).")
    ReplayJob.objects.filter(pk=job.pk).update(cancel_requested=True)
    audit_record(actor=actor, action="replay.cancel", outcome=AuditEvent.Outcome.SUCCESS, cluster=job.cluster,
                 target=f"topic:{job.topic}", reason=reason, params={"job": job.pk}, correlation_id=job.correlation_id)
    job.refresh_from_db()
    return job
