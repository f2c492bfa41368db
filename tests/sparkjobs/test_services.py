"""What the replay services write to disk for the worker: the spec the Spark driver reads holds secrets."""

import json
import os
import stat
import uuid
from pathlib import Path

import pytest

from console.audit.actor import Actor
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
