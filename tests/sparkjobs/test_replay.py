"""Replays end to end: real broker, real Celery worker, the resident Spark driver with Spark's Kafka source."""

import json
from pathlib import Path

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from sparkjobs.models import ReplayJob
from sparkjobs.services import replay_cancel, replay_submit
from tests.sparkjobs.conftest import open_to_others, wait_finished

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def source(topic_factory, produce):
    """2 partitions × 10 records with keys, JSON values and a header each."""
    topic = topic_factory("replay-src", partitions=2)
    produce(topic, [(p, f"k{p}-{i}".encode(), json.dumps({"n": i, "kind": "even" if i % 2 == 0 else "odd"}).encode(),
                     [("trace", f"t{p}-{i}".encode())]) for p in (0, 1) for i in range(10)])
    return topic


@pytest.fixture
def operator_actor(make_user, local_cluster):
    return Actor(user=make_user("replayer", "operator"), source="cli")


def _submit(actor, topic, **kwargs):
    defaults = dict(actor=actor, cluster="local", topic=topic, partitions=None, start="earliest", end="latest",
                    sink="jsonl", reason="test replay")
    return replay_submit(**{**defaults, **kwargs})


def test_filter_to_parquet_keeps_bytes_and_headers(replay_env, operator_actor, source, spark_session):
    job = wait_finished(_submit(operator_actor, source, sink="parquet",
                                filter_expr="get_json_object(value, '$.kind') = 'even' AND partition = 1"))

    assert job.state == "succeeded", job.error
    rows = spark_session.read.parquet(job.output_dir).collect()
    assert sorted((r.partition, r.offset, bytes(r.key)) for r in rows) == [(1, i, f"k1-{i}".encode()) for i in range(0, 10, 2)]
    assert all(r.headers[0].key == "trace" and bytes(r.headers[0].value) == f"t1-{r.offset}".encode() for r in rows)
    assert (job.records_read, job.records_written) == (20, 5)
    names = [p.name for p in Path(job.output_dir).glob("part-*")]
    assert names and all(n.endswith(".parquet") for n in names)
    # Hadoop chmods what it writes itself (0644 by its own umask): the outputs and the log are the console's only.
    assert open_to_others(job.output_dir) == [] and open_to_others(job.log_path) == []


def test_a_filter_of_several_allowed_functions_runs_a_replay_end_to_end(replay_env, operator_actor, source):
    """What the allowlist lets through, Spark runs: the regenerated SQL over decoded values, headers and offsets."""
    expression = ("lower(get_json_object(value, '$.kind')) = 'even' AND exists(headers, h -> startswith(h.key, 'tr')) "
                  "AND coalesce(CAST(get_json_object(value, '$.n') AS INT), -1) BETWEEN 2 AND 6 "
                  "AND decode(element_at(headers, 1).value, 'UTF-8') LIKE 't0-%' AND year(timestamp) > 2000")
    job = wait_finished(_submit(operator_actor, source, filter_expr=expression))

    assert job.state == "succeeded", job.error
    assert job.filter_expr == expression  # shown as typed
    lines = [json.loads(line) for path in Path(job.output_dir).glob("part-*") for line in path.read_text().splitlines()]
    assert sorted((r["partition"], r["offset"]) for r in lines) == [(0, 2), (0, 4), (0, 6)]
    assert (job.records_read, job.records_written) == (20, 3)


def test_cancel_stops_the_replays_spark_jobs(replay_env, operator_actor, topic_factory, produce):
    from tests.sparkjobs.conftest import wait_driver_done, wait_running

    # Large enough that the warm resident driver is still writing when the cancel arrives.
    topic = topic_factory("replay-cancel", partitions=2)
    produce(topic, [(n % 2, None, b"c" * 100, None) for n in range(400_000)])
    job = wait_running(_submit(operator_actor, topic))
    replay_cancel(actor=operator_actor, job_id=job.pk, reason="wrong range")

    job = wait_finished(job, timeout=60)

    assert job.state == "cancelled", job.error
    wait_driver_done(job.driver_pid, job.pk, timeout=10)
    assert AuditEvent.objects.filter(action="replay.run", outcome="failure", correlation_id=job.correlation_id).exists()
    assert AuditEvent.objects.filter(action="replay.cancel").exists()
    assert "cancelling the replay's Spark jobs" in Path(job.log_path).read_text()


def test_a_failing_job_is_reported_with_the_spark_error(replay_env, operator_actor, source):
    job = _submit(operator_actor, source)
    cluster_admin("local").delete_topic(source)  # gone before Spark reads it

    job = wait_finished(job)

    assert job.state == "failed"
    assert job.error.startswith("Spark failed with") and Path(job.log_path).exists()


def test_bad_input_changes_nothing(replay_env, operator_actor, source):
    with pytest.raises(ConsoleError, match="uses amount"):
        _submit(operator_actor, source, filter_expr="amount > 3")
    with pytest.raises(ConsoleError, match="would replay forever"):
        _submit(operator_actor, source, sink="topic", sink_topic=source)
    with pytest.raises(ConsoleError, match="holds no records"):
        _submit(operator_actor, source, start="offsets:0=10,1=10")
    with pytest.raises(ConsoleError, match="no partition 7"):
        _submit(operator_actor, source, partitions=[7])
    assert not ReplayJob.objects.exists() and not AuditEvent.objects.exists()


def test_viewer_is_refused_on_the_page_and_in_the_shell(client_for, make_user, local_cluster, source):
    from django.core.management import CommandError, call_command

    viewer = make_user("replay-viewer", "viewer")
    response = client_for(viewer).post("/clusters/local/replays/new/",
                                       {"topic": source, "start": "earliest", "end": "latest", "sink": "jsonl",
                                        "reason": "r"})
    assert response.status_code == 403
    with pytest.raises(CommandError, match="needs the operator role"):
        call_command("replay", "--topic", source, "--start", "earliest", "--sink", "files:jsonl",
                     "--actor", "replay-viewer", "--reason", "r")
    assert not ReplayJob.objects.exists()


def test_a_bounded_range_from_the_shell_arrives_exactly_once_and_the_page_offers_the_files(
        replay_env, operator_actor, source, client_for, capsys):
    from django.core.management import call_command

    call_command("replay", "--topic", source, "--start", "offsets:0=2,1=0", "--end", "offsets:0=8,1=5", "--sink",
                 "files:jsonl", "--partitions", "0,1", "--wait", "--actor", "replayer", "--reason", "from the shell")

    job_id, summary = capsys.readouterr().out.strip().splitlines()
    job = ReplayJob.objects.get(pk=job_id)
    assert job.ranges == {"0": [2, 8], "1": [0, 5]} and job.planned_records == 11
    expected = {"job": int(job_id), "state": "succeeded", "records": 11, "isolation": "read_committed", "aborted": 0,
                "transaction_markers": 0, "summary": "11 offsets in the range: 11 records read",
                "output": job.output_dir}
    printed = json.loads(summary)  # the job's whole JSON (the API answers the same): these among its fields
    assert {key: printed.get(key) for key in expected} == expected
    lines = [json.loads(line) for f in sorted(Path(job.output_dir).glob("part-*"))
             for line in f.read_text().splitlines()]
    got = sorted((r["partition"], r["offset"], r["key"], r["value"], r["headers"][0]["value"]) for r in lines)

    def value(i):
        return json.dumps({"n": i, "kind": "even" if i % 2 == 0 else "odd"})

    assert got == sorted([(0, i, f"k0-{i}", value(i), f"t0-{i}") for i in range(2, 8)]
                         + [(1, i, f"k1-{i}", value(i), f"t1-{i}") for i in range(5)])
    assert (job.records_read, job.records_written, job.progress_percent) == (11, 11, 100)
    outcome = AuditEvent.objects.get(action="replay.run", outcome="success")
    assert outcome.after["written"] == 11 and outcome.correlation_id == job.correlation_id

    client = client_for(operator_actor.user)
    final = client.get(f"/clusters/local/replays/{job_id}/", headers={"HX-Request": "true"})
    assert final.status_code == 286  # htmx: stop polling, the job ended
    page = client.get(f"/clusters/local/replays/{job_id}/").content.decode()
    name = page.split(f"/replays/{job_id}/files/")[1].split('"')[0]
    assert name.endswith(".jsonl")  # Spark's text writer names its files part-00000: the job adds the type
    download = client.get(f"/clusters/local/replays/{job_id}/files/{name}")
    assert download["Content-Type"] == "application/x-ndjson"
    assert b"".join(download.streaming_content) == (Path(job.output_dir) / name).read_bytes()
    assert client.get(f"/clusters/local/replays/{job_id}/files/..%2F..%2Fsecret").status_code == 404


def test_start_at_the_range_a_reset_skipped(local_cluster, source, commit, make_user):
    from offsets.resets.planning import ALL_TOPICS, ToLatest
    from offsets.resets.services import group_offsets_reset
    from sparkjobs.selectors import resolve_range

    commit("skipper", {(source, 0): 3, (source, 1): 10})
    actor = Actor(user=make_user("skip-op", "operator"), source="cli")
    group_offsets_reset(actor=actor, cluster="local", group="skipper", scope=ALL_TOPICS, strategy=ToLatest(),
                        reason="skip the backlog", confirm="skipper")
    seq = AuditEvent.objects.get(action="group.offsets.reset", outcome="success").seq

    resolved = resolve_range("local", source, None, f"reset:{seq}", "latest")

    assert resolved.ranges == {0: (3, 10)} and resolved.planned == 7  # partition 1 skipped nothing


def test_a_masked_role_replays_to_masked_files_only(replay_env, operator_actor, source, make_user, client_for,
                                                    spark_session):
    """Masking rules reach replays: the operator they mask for gets JSON-lines and Parquet files masked by the
    executors (and no topic or filter, which would let the values out); an admin's replay keeps every byte."""
    from console.errors import PermissionRefused
    from masking.services import mask_rule_create

    admin = Actor(user=make_user("mask-admin", "admin"), source="cli")
    mask_rule_create(actor=admin, cluster="local", topic_pattern=source, selector="jsonpath", target="$.kind",
                     action="replace", replacement="[kind]", reason="test")
    mask_rule_create(actor=admin, cluster="local", topic_pattern=source, selector="header", target="trace",
                     action="hide", reason="test")
    for refused in (dict(sink="topic", sink_topic="anywhere"), dict(filter_expr="partition = 0")):
        with pytest.raises(PermissionRefused, match="Masking rules"):
            _submit(operator_actor, source, **refused)
    assert AuditEvent.objects.filter(action="replay.run", outcome="refused").count() == 2

    def lines_of(job) -> list[dict]:
        assert job.state == "succeeded", job.error
        return [json.loads(line) for f in Path(job.output_dir).glob("part-*") for line in f.read_text().splitlines()]

    masked = lines_of(wait_finished(_submit(operator_actor, source)))
    assert len(masked) == 20 and all(r["value"]["kind"] == "[kind]" and r["headers"] == [] for r in masked)
    assert sorted(r["value"]["n"] for r in masked) == sorted(list(range(10)) * 2)
    parquet_job = wait_finished(_submit(operator_actor, source, sink="parquet"))
    assert parquet_job.state == "succeeded" and parquet_job.masking, parquet_job.error
    rows = spark_session.read.parquet(parquet_job.output_dir).collect()
    values = [json.loads(r.value) for r in rows]
    assert len(rows) == 20 and all(v["kind"] == "[kind]" for v in values) and all(r.headers == [] for r in rows)
    assert sorted(v["n"] for v in values) == sorted(list(range(10)) * 2)
    files = list(Path(parquet_job.output_dir).glob("*.parquet"))
    assert files and not any(word in f.read_bytes() for f in files for word in (b'"even"', b'"odd"', b"t0-", b"t1-"))
    admin_job = wait_finished(_submit(admin, source, partitions=[1]))
    whole = lines_of(admin_job)
    assert {r["value"] for r in whole} >= {json.dumps({"n": 1, "kind": "odd"})}
    assert all(r["headers"][0]["value"].startswith("t1-") for r in whole)
    # The admin's unmasked files are not for a masked reader; the files masked for them are.
    viewer = client_for(make_user("mask-viewer", "viewer"))
    masked_job = ReplayJob.objects.filter(topic=source, state="succeeded", sink="jsonl").exclude(
        pk=admin_job.pk).get()
    assert masked_job.masking and not admin_job.masking
    for job, status in ((admin_job, 403), (masked_job, 200)):
        name = Path(next(Path(job.output_dir).glob("part-*"))).name
        assert viewer.get(f"/clusters/local/replays/{job.pk}/files/{name}").status_code == status
