"""Imports on the real broker: a file with three bad lines is previewed (each bad line by number, the first
records with the partitions they then land on), then imported by a real Celery worker while the page shows its
progress; it stops at the first bad line unless told to skip them, is audited and refused for viewers, can be
stopped, and a worker that dies mid-import leaves it failed and audited, not running; the shell imports an
export's CSV back."""

from __future__ import annotations

import io
import json
import re
import time
import uuid
from io import StringIO
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent
from records.models import ImportJob

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
# A worker process reads the jobs the page starts: those tests commit their rows.
with_worker = pytest.mark.django_db(transaction=True)
BAD = {5: "{broken", 12: json.dumps({"key": "no value here"}), 20: json.dumps({"value": "x", "partition": 9})}


def _read(bootstrap: str, topic: str, partitions: int) -> list[tuple[int, str, str, list]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"raw-{uuid.uuid4().hex}",
                         "enable.partition.eof": True, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    found, ended = [], set()
    while len(ended) < partitions:
        for m in consumer.consume(500, timeout=1):
            if m.error():
                ended.add(m.partition())
            else:
                key = None if m.key() is None else m.key().decode()
                found.append((m.partition(), key, m.value().decode(), m.headers() or []))
    consumer.close()
    return found


def _file() -> bytes:
    lines = [BAD.get(n) or json.dumps({"key": f"k{n}", "value": {"line": n}, "headers": [["src", "file"]]})
             for n in range(1, 31)]
    return ("\n".join(lines) + "\n").encode()


def _finished(client, url: str, posted: str, timeout: float = 60.0) -> str:
    """Follows the job the page started, as its htmx poll does, until it has ended; its last partial."""
    job = re.search(r'id="import-job-(\d+)"', posted)[1]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        page = client.get(f"{url}{job}/").content.decode()
        if re.search(r'data-state="(done|failed)"', page):
            assert "hx-trigger" not in page  # an ended job is not polled any more
            return page
        time.sleep(0.3)
    raise AssertionError(f"import {job} did not end within {timeout} s: {page}")


@with_worker
def test_an_import_with_three_bad_lines_reports_them_by_number(client_for, viewer, operator, topic_factory,
                                                               kafka_node, local_cluster, celery_worker_process):
    topic = topic_factory("import", partitions=3)
    url = f"/clusters/local/messages/{topic}/import/"

    def post(user, **fields):
        return client_for(user).post(url, {"file": SimpleUploadedFile("rows.jsonl", _file()), "rate": 20,
                                           "reason": "load fixtures", **fields})

    assert post(viewer, preview="1").status_code == 403 and client_for(viewer).get(url).status_code == 403
    preview = post(operator, preview="1").content.decode()
    assert re.findall(r'id="bad-line-(\d+)"', preview) == ["5", "12", "20"]
    assert "27</strong> records to write" in preview and "partition 9 does not exist" in preview
    shown = {int(line): int(p) for line, p in re.findall(r'id="preview-(\d+)"><td>\d+</td><td>(\d+)', preview)}
    assert sorted(shown) == [1, 2, 3, 4, 6, 7, 8, 9, 10, 11]
    assert _read(kafka_node.bootstrap, topic, 3) == [] and not AuditEvent.objects.filter(action="records.import")

    started = post(operator).content.decode()
    assert 'data-state="queued"' in started and "hx-trigger=\"every 1s\"" in started
    stopped = _finished(client_for(operator), url, started)
    assert 'data-state="failed"' not in stopped and "Stopped at line 5" in stopped and re.findall(r'id="bad-line-(\d+)"', stopped) == ["5"]
    written = _read(kafka_node.bootstrap, topic, 3)
    assert sorted(json.loads(v)["line"] for _, _, v, _ in written) == [1, 2, 3, 4]
    # Where the preview said each keyed record would go (Kafka's murmur2) is where it went.
    assert all(shown[json.loads(v)["line"]] == p for p, _, v, _ in written)
    assert all(h == [("src", b"file")] for *_, h in written)

    skipped = _finished(client_for(operator), url, post(operator, skip_bad="on").content.decode())
    assert re.findall(r'id="bad-line-(\d+)"', skipped) == ["5", "12", "20"]
    assert "27 records written" in re.sub(r"<[^>]+>", "", skipped)
    assert len(_read(kafka_node.bootstrap, topic, 3)) == 4 + 27
    outcome = AuditEvent.objects.filter(action="records.import", outcome="success").order_by("seq").last()
    assert outcome.actor_name == operator.username and outcome.after["records"] == 27
    assert [b["line"] for b in outcome.after["bad_lines"]] == [5, 12, 20]
    assert outcome.params["rate"] == 20 and outcome.params["skip_bad"] is True
    assert outcome.after["seconds"] >= 1.0  # 27 records at 20 a second: the second batch waited



@with_worker
def test_a_running_import_stops_when_asked_and_redis_down_is_said_at_once(client_for, operator, topic_factory,
                                                                            kafka_node, local_cluster, redis_node,
                                                                            celery_worker_process):
    topic = topic_factory("import-slow", partitions=1)
    url = f"/clusters/local/messages/{topic}/import/"
    rows = "".join(json.dumps({"value": f"v{n}"}) + "\n" for n in range(200)).encode()
    client = client_for(operator)
    posted = client.post(url, {"file": SimpleUploadedFile("slow.jsonl", rows), "rate": 10,
                               "reason": "slow load"}).content.decode()
    job = int(re.search(r'id="import-job-(\d+)"', posted)[1])
    deadline = time.monotonic() + 30
    while ImportJob.objects.get(pk=job).report.get("records", 0) < 10 and time.monotonic() < deadline:
        time.sleep(0.2)
    running = client.get(f"{url}{job}/").content.decode()
    assert 'data-state="running"' in running and "<progress" in running and "Stop the import" in running
    client.post(f"{url}{job}/cancel/")
    ended = _finished(client, url, posted)
    assert f"Cancelled by {operator.username} after" in ended
    stopped = ImportJob.objects.get(pk=job)
    written = len(_read(kafka_node.bootstrap, topic, 1))
    assert 10 <= written == stopped.report["records"] < 200
    events = AuditEvent.objects.filter(correlation_id=stopped.correlation_id).order_by("seq")
    assert [(e.action, e.outcome) for e in events] == [
        ("records.import", "intent"), ("records.import.cancel", "success"), ("records.import", "failure")]
    assert not Path(stopped.path).exists()

    redis_node.stop()
    try:
        began = time.monotonic()
        refused = client.post(url, {"file": SimpleUploadedFile("more.jsonl", rows), "rate": 10, "reason": "again"})
        assert time.monotonic() - began < 10
    finally:
        redis_node.start()
    assert "the task queue (Redis) did not answer" in refused.content.decode()
    failed = ImportJob.objects.order_by("-pk").first()
    assert failed.state == "failed" and not Path(failed.path).exists() and failed.correlation_id is None
    assert len(_read(kafka_node.bootstrap, topic, 1)) == written


def test_an_import_whose_worker_died_is_failed_and_its_audit_closed(operator, local_cluster, tmp_path, settings):
    from datetime import timedelta

    from django.utils import timezone

    from console.audit.actor import Actor
    from console.audit.services import audit_record
    from records.import_jobs import import_jobs_reap

    intent = audit_record(actor=Actor(user=operator, source="web"), action="records.import", outcome="intent",
                          cluster="local", target="topic:t", reason="load")
    upload = tmp_path / "waiting.upload"
    upload.write_text("{}\n")
    now = timezone.now()
    dead = ImportJob.objects.create(cluster="local", topic="t", kind="jsonl", file_name="a.jsonl", path=str(upload),
                                    params={}, user=operator, actor_name=operator.username, state="running",
                                    correlation_id=intent.correlation_id, report={"records": 5000},
                                    heartbeat_at=now - timedelta(seconds=90))
    alive = ImportJob.objects.create(cluster="local", topic="t", kind="jsonl", file_name="b.jsonl", path="/nowhere",
                                     params={}, actor_name="x", state="running", heartbeat_at=now)
    waiting = ImportJob.objects.create(cluster="local", topic="t", kind="jsonl", file_name="c.jsonl", path="/x",
                                       params={}, actor_name="x")
    ImportJob.objects.filter(pk=waiting.pk).update(created_at=now - timedelta(hours=1))
    assert sorted(import_jobs_reap(now=now)) == sorted([dead.pk, waiting.pk])
    dead.refresh_from_db()
    assert dead.state == "failed" and "no heartbeat for 90 s" in dead.error and "after 5000 record(s)" in dead.error
    assert not upload.exists() and ImportJob.objects.get(pk=alive.pk).state == "running"
    assert "No worker took this import" in ImportJob.objects.get(pk=waiting.pk).error
    closing = AuditEvent.objects.get(correlation_id=intent.correlation_id, outcome="failure")
    assert closing.error == dead.error and closing.actor_name == operator.username
    assert import_jobs_reap(now=now) == []  # once
    from records.import_jobs import _end

    _end(dead.pk, "done", report={"records": 9000})  # its worker, back after all, as it ends the job
    dead.refresh_from_db()
    assert dead.state == "failed" and dead.report == {"records": 5000}


def test_the_shell_imports_an_exports_csv(viewer, operator, topic_factory, produce, kafka_node, tmp_path,
                                          local_cluster):
    source, target = topic_factory("import-src", partitions=2), topic_factory("import-dst", partitions=2)
    produce(source, [(i % 2, f"k{i}".encode(), f"v,{i}\n\"q\"".encode(), [("h", b"1")]) for i in range(10)])
    exported = tmp_path / "src.csv"
    call_command("messages", "export", "--topic", source, "--as", "csv", "--output", str(exported),
                 "--actor", viewer.username, stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match="operator role"):
        call_command("messages", "import", "--topic", target, "--file", str(exported), "--actor", viewer.username)
    out = StringIO()
    call_command("messages", "import", "--topic", target, "--file", str(exported), "--actor", operator.username,
                 "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["records"] == 10 and _read(kafka_node.bootstrap, target, 2) == []
    out = StringIO()
    call_command("messages", "import", "--topic", target, "--file", str(exported), "--actor", operator.username,
                 "--reason", "copy back", "--yes", "--rate", "5000", stdout=out, stderr=StringIO())
    assert "10 record(s) written; 0 bad line(s)." in out.getvalue()
    assert sorted(_read(kafka_node.bootstrap, target, 2)) == sorted(_read(kafka_node.bootstrap, source, 2))


def test_an_import_encodes_values_with_a_registry_subject(registry_cluster, schema_registry, topic_factory,
                                                          operator, viewer, admin):
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    from console.audit.actor import Actor
    from records.imports import import_preview, records_import
    from topics.selectors import records_page

    topic = topic_factory("import-avro", partitions=1)
    schema = json.dumps({"type": "record", "name": "Row", "namespace": "imp", "fields": [
        {"name": "id", "type": "string"}, {"name": "amount", "type": "double"}]})
    SchemaRegistryClient({"url": schema_registry.url}).register_schema(f"{topic}-value", Schema(schema, "AVRO"))
    lines = [json.dumps({"key": f"k{i}", "value": {"id": f"r{i}", "amount": i * 1.5}}) for i in range(4)]
    lines.insert(2, json.dumps({"value": {"id": "bad", "amount": "not a number"}}))
    data = ("\n".join(lines) + "\n").encode()
    common = dict(cluster="local", topic=topic, kind="jsonl", value_subject=f"{topic}-value")
    preview = import_preview(**common, source=io.BytesIO(data))
    assert preview.records == 4 and [b.line for b in preview.bad] == [3]
    done = records_import(**common, source=io.BytesIO(data), actor=Actor(user=operator, source="cli"), rate=1000,
                          skip_bad=True, reason="avro rows")
    assert done.records == 4 and [b.line for b in done.bad] == [3]
    page = records_page("local", topic, 0, offset=0)
    assert [(r.value.kind, json.loads(r.value.text)) for r in page.records] == [
        ("avro", {"id": f"r{i}", "amount": i * 1.5}) for i in range(4)]
    # A JSON-path masking rule reaches into the Avro value as decoded.
    from masking.apply import mask_page
    from masking.selectors import masker_for
    from masking.services import mask_rule_create

    mask_rule_create(actor=Actor(user=admin, source="cli"), cluster="local", topic_pattern=topic,
                     selector="jsonpath", target="$.id", action="replace", replacement="[id]", reason="test")
    masked = mask_page(masker_for("local", topic, viewer), page)
    assert [json.loads(r.value.text) for r in masked.records] == [{"id": "[id]", "amount": i * 1.5} for i in range(4)]
    assert mask_page(masker_for("local", topic, admin), page) == page
