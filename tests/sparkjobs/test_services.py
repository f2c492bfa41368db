"""What the replay services write to disk for the worker: the spec the Spark driver reads holds secrets."""

import json
import os
import socket
import stat
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from sparkjobs import runner, services
from sparkjobs.models import ReplayJob

pytestmark = [pytest.mark.django_db]


def test_the_spec_with_a_jaas_password_is_0600_when_the_driver_gets_it(settings, tmp_path, local_cluster, make_user,
                                                                        monkeypatch):
    """The spec exists only while the replay runs: the runner, where it hands the spec to the driver, sees it."""
    settings.REPLAY_OUTPUT_DIR = str(tmp_path)
    local_cluster.client_config = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                                   "sasl.username": "console"}
    local_cluster.secret_env = {"sasl.password": "CONSOLE_SECRET_TEST_SPEC_PASSWORD"}
    local_cluster.save()
    monkeypatch.setenv("CONSOLE_SECRET_TEST_SPEC_PASSWORD", "pa55-in-spec")
    previous = os.umask(0)  # the mode must not depend on the worker's umask
    user = make_user("spec-writer", "operator")
    job = ReplayJob.objects.create(cluster="local", topic="t", start_spec="earliest", end_spec="latest",
                                   ranges={"0": [0, 1]}, planned_records=1, sink="jsonl", correlation_id=uuid.uuid4(),
                                   output_dir=str(tmp_path / "out"), created_by=user, filter_expr="nvl(key, '') = ''")
    seen = {}

    def observe(spec_path: Path, log_path: Path, **kwargs):
        seen["mode"] = stat.S_IMODE(spec_path.stat().st_mode)
        seen["spec"] = json.loads(spec_path.read_text())
        return {"state": "failed", "result": None, "error": "observed only"}

    monkeypatch.setattr(runner, "run", observe)
    try:
        services.replay_run(job_id=job.pk)
    finally:
        os.umask(previous)

    assert seen["mode"] == 0o600
    assert "pa55-in-spec" in seen["spec"]["source"]["config"]["sasl.jaas.config"]
    assert seen["spec"]["filter"] == "COALESCE(key, '') = ''"  # the checked tree's SQL, not the text as typed
    assert not (tmp_path / "jobs" / str(job.pk) / "spec.json").exists()
    assert list((tmp_path / "jobs" / str(job.pk)).glob(".spec.json.*")) == []


def test_a_stored_filter_the_allowlist_now_refuses_fails_the_run_before_spark(settings, tmp_path, local_cluster,
                                                                              make_user, monkeypatch):
    settings.REPLAY_OUTPUT_DIR = str(tmp_path)
    job = ReplayJob.objects.create(cluster="local", topic="t", start_spec="earliest", end_spec="latest",
                                   ranges={"0": [0, 1]}, planned_records=1, sink="jsonl", correlation_id=uuid.uuid4(),
                                   output_dir=str(tmp_path / "out"), created_by=make_user("old-filter", "operator"),
                                   filter_expr="from_avro(value, '\"string\"') IS NULL")

    def never(*args, **kwargs):
        raise AssertionError("a refused filter reached the Spark driver")

    monkeypatch.setattr(runner, "run", never)
    job = services.replay_run(job_id=job.pk)

    assert job.state == ReplayJob.State.FAILED and "from_avro()" in job.error


def _silent_job(user, tmp_path) -> ReplayJob:
    """A running job whose worker stopped sending heartbeats a while ago; its driver ran on this machine."""
    long_ago = timezone.now() - timedelta(minutes=10)
    return ReplayJob.objects.create(
        cluster="local", topic="t", start_spec="earliest", end_spec="latest", ranges={"0": [0, 1]},
        planned_records=1, sink="jsonl", correlation_id=uuid.uuid4(), output_dir=str(tmp_path / "out"),
        created_by=user, state=ReplayJob.State.RUNNING, started_at=long_ago, heartbeat_at=long_ago,
        worker_host=socket.gethostname(), driver_pid=2 ** 22 + 17)


def _ends(job: ReplayJob) -> list[tuple[str, str]]:
    return [(e.outcome, e.error) for e in AuditEvent.objects.filter(correlation_id=job.correlation_id,
                                                                     action="replay.run").order_by("seq")]


def test_a_reaped_job_stays_running_until_its_end_and_audit_event_are_written_together(settings, tmp_path,
                                                                                       make_user, monkeypatch):
    settings.REPLAY_HEARTBEAT_TIMEOUT_S = 60
    job = _silent_job(make_user("reaped", "operator"), tmp_path)
    seen = {}

    def stop_orphan(pid: int, job_id: int) -> bool:
        # What a page or `replay --wait` sees while the driver is stopped, and what a second reaper does.
        seen["state"] = ReplayJob.objects.get(pk=job_id).state
        seen["second reaper"] = services.replay_reap_orphans()
        return True

    monkeypatch.setattr(runner, "stop_orphan", stop_orphan)
    assert services.replay_reap_orphans() == [job.pk]

    assert seen == {"state": ReplayJob.State.RUNNING, "second reaper": []}
    job.refresh_from_db()
    assert job.state == ReplayJob.State.FAILED and "Its Spark job was stopped." in job.error
    assert _ends(job) == [(AuditEvent.Outcome.FAILURE, job.error)]


def test_a_worker_back_after_its_job_was_reaped_changes_nothing(settings, tmp_path, make_user, monkeypatch):
    settings.REPLAY_HEARTBEAT_TIMEOUT_S = 60
    job = _silent_job(make_user("late-worker", "operator"), tmp_path)
    as_the_worker_read_it = ReplayJob.objects.get(pk=job.pk)
    monkeypatch.setattr(runner, "stop_orphan", lambda pid, job_id: False)
    assert services.replay_reap_orphans() == [job.pk]

    ended = services._finish(as_the_worker_read_it, {"state": "succeeded", "result": {"read": 1, "written": 1}})

    assert ended.state == ReplayJob.State.FAILED and ended.records_written is None
    job.refresh_from_db()
    assert job.state == ReplayJob.State.FAILED and job.error.startswith("The worker running this replay stopped")
    assert _ends(job) == [(AuditEvent.Outcome.FAILURE, job.error)]


def test_a_worker_that_ends_its_job_while_the_reaper_stops_the_driver_keeps_its_outcome(settings, tmp_path,
                                                                                        make_user, monkeypatch):
    settings.REPLAY_HEARTBEAT_TIMEOUT_S = 60
    job = _silent_job(make_user("slow-worker", "operator"), tmp_path)

    def stop_orphan(pid: int, job_id: int) -> bool:
        services._finish(ReplayJob.objects.get(pk=job_id), {"state": "succeeded", "result": {"read": 1, "written": 1}})
        return True

    monkeypatch.setattr(runner, "stop_orphan", stop_orphan)
    assert services.replay_reap_orphans() == []

    job.refresh_from_db()
    assert job.state == ReplayJob.State.SUCCEEDED and job.records_written == 1 and job.error == ""
    assert _ends(job) == [(AuditEvent.Outcome.SUCCESS, "")]
