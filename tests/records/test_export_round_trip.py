"""Export then import on the real broker, as a platform team moving a topic does: every record (null keys,
tombstones, empty values, bytes that are not UTF-8, values past the page's 10,000 characters and up to the
topic's max.message.bytes, JSON with its own spacing, headers with JSON, binary, empty and null values, repeated
names in order) comes back byte for byte, in its partition with its timestamp, through JSON lines, CSV and Avro,
from the shell and from the page; hypothesis generates more. A masked reader's export runs in every format and
holds no masked byte."""

from __future__ import annotations

import base64
import io
import json
import sys
import time
import uuid
from io import StringIO
from pathlib import Path

import fastavro
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from console.audit.models import AuditEvent
from records.imports import MSG_TOO_LARGE
from records.record_size import record_batch_bytes

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
FORMATS = ("jsonl", "csv", "avro")
LIMIT = 1_048_588  # the broker's default max.message.bytes
BIG_JSON = json.dumps({"pad": "x" * 12_000, "n": 1}, indent=1).encode()  # 12,0xx bytes: past the page's cut


def _every_case() -> list[tuple]:
    """(partition, key, value, headers, timestamp) of each case the issue names; timestamps of an hour ago
    (older ones would meet the topic's retention)."""
    hour_ago = int(time.time() * 1000) - 3_600_000
    return [
        (0, None, b"null key", [("h", b"1")], hour_ago + 0),
        (0, b"tombstone", None, [], hour_ago + 1),
        (1, b"empty", b"", [("empty", b""), ("none", None)], hour_ago + 2),
        (1, b"\xff\xfe", b"\xc3\x28\xa0\xa1", [("bin", b"\x00\xff\x10")], hour_ago + 3),
        (2, b"big", BIG_JSON, [("trace", b'{"span": 1}'), ("trace", b"second"), ("trace", b'[1,  2]')],
         hour_ago + 4),
        (2, "ключ ü".encode(), b'{"a":  1, "b" :[ ]}', [("json", b'{"span":1}')], hour_ago + 5),
        (0, b"=1+1", b"-5", [("@h", b"+x")], hour_ago + 6),
        (1, b"bom", b"\xef\xbb\xbf{\"x\": 1}", [], hour_ago + 7),
        (2, b"\x00\x00\x00\x00\x01", b"\x00\x00\x00\x00\x07\x02\x04", [], hour_ago + 8),
        (0, b"near-limit", b"v" * (LIMIT - 200), [], hour_ago + 9),
    ]


def _produce(bootstrap: str, topic: str, records: list[tuple]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "message.max.bytes": 2_000_000})
    refused = []
    for partition, key, value, headers, timestamp in records:
        producer.produce(topic, key=key, value=value, partition=partition, headers=headers or None,
                         timestamp=timestamp or 0,  # 0: the producer's clock
                         on_delivery=lambda error, _: error is not None and refused.append(error))
    assert producer.flush(30) == 0 and not refused, refused


def _raw(bootstrap: str, topic: str, partitions: int) -> list[tuple]:
    """Every record as a raw consumer reads it: (partition, offset order, key, value, headers, timestamp)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"raw-{uuid.uuid4().hex}",
                         "enable.partition.eof": True, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    found, ended = [], set()
    while len(ended) < partitions:
        for m in consumer.consume(500, timeout=1):
            if m.error():
                ended.add(m.partition())
            else:
                found.append((m.partition(), m.offset(), m.key(), m.value(), list(m.headers() or []),
                              m.timestamp()[1]))
    consumer.close()
    return sorted(found)


def _content(records: list[tuple]) -> list[tuple]:
    """What must survive: per partition, in offset order, key, value, headers in order, timestamp."""
    return [(p, k, v, [(n, d) for n, d in h], t) for p, _, k, v, h, t in records]


def _export(topic: str, fmt: str, target: Path, actor: str) -> None:
    call_command("messages", "export", "--topic", topic, "--as", fmt, "--output", str(target), "--actor", actor,
                 stderr=StringIO(), stdout=StringIO())


def _import(topic: str, path: Path, actor: str, *extra: str) -> dict:
    out = StringIO()
    call_command("messages", "import", "--topic", topic, "--file", str(path), "--rate", "50000", "--yes",
                 "--format", "json", "--actor", actor, "--reason", "move the topic", *extra, stdout=out,
                 stderr=StringIO())
    return json.loads(out.getvalue())


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_case_comes_back_byte_for_byte_through_the_shell(fmt, admin, operator, topic_factory, kafka_node,
                                                              local_cluster, tmp_path):
    source, target = topic_factory("moving", partitions=3), topic_factory("moved", partitions=3)
    _produce(kafka_node.bootstrap, source, _every_case())
    exported = tmp_path / f"out.{fmt}"
    _export(source, fmt, exported, admin.username)
    report = _import(target, exported, operator.username)
    assert report["records"] == len(_every_case()) and report["bad_count"] == 0
    assert _content(_raw(kafka_node.bootstrap, target, 3)) == _content(_raw(kafka_node.bootstrap, source, 3))
    events = AuditEvent.objects.filter(action__in=["records.export", "records.import"], outcome="success")
    assert {e.action for e in events} == {"records.export", "records.import"}


def test_the_pages_export_imports_through_the_page_exactly(client_for, admin, operator, topic_factory, kafka_node,
                                                           local_cluster):
    source, target = topic_factory("page-move", partitions=3), topic_factory("page-moved", partitions=3)
    cases = [c for c in _every_case() if c[1] != b"near-limit"]  # the page takes files up to IMPORT_MAX_BYTES
    _produce(kafka_node.bootstrap, source, cases)
    got = client_for(admin).get(f"/clusters/local/messages/{source}/export/", {"format": "avro"})
    data = b"".join(got.streaming_content)
    read = list(fastavro.reader(io.BytesIO(data)))
    assert [r["value"] for r in read if r["key"] == b"big"] == [BIG_JSON]  # never the page's 10,000-char view
    preview = client_for(operator).post(f"/clusters/local/messages/{target}/import/", {
        "file": SimpleUploadedFile("moved.avro", data), "rate": 1000, "reason": "move", "preview": "1"})
    assert preview.status_code == 200 and f"<strong>{len(cases)}</strong> records to write" in preview.content.decode()


def test_a_record_over_the_topics_limit_is_refused_by_name_never_cut(admin, operator, topic_factory, kafka_node,
                                                                    local_cluster, tmp_path):
    source = topic_factory("roomy", partitions=1, configs={"max.message.bytes": "300000"})
    small = topic_factory("narrow", partitions=1, configs={"max.message.bytes": "100000"})
    _produce(kafka_node.bootstrap, source, [(0, b"fits", b"a" * 1000, [], None), (0, b"big", b"b" * 200_000, [], None),
                                            (0, b"after", b"c", [], None)])
    exported = tmp_path / "roomy.jsonl"
    _export(source, "jsonl", exported, admin.username)
    stopped = _import(small, exported, operator.username)
    assert stopped["records"] == 1 and stopped["stopped_at_line"] == 2
    size = record_batch_bytes(b"big", b"b" * 200_000)
    assert stopped["bad_lines"][0]["reason"] == MSG_TOO_LARGE.format(size=size, topic=small, limit=100_000)
    skipped = _import(small, exported, operator.username, "--skip-bad")
    assert skipped["records"] == 2 and skipped["bad_count"] == 1
    values = [r[3] for r in _raw(kafka_node.bootstrap, small, 1)]
    assert values == [b"a" * 1000, b"a" * 1000, b"c"]  # nothing shortened to fit


def test_the_size_the_import_refuses_at_is_the_brokers(topic_factory, kafka_node):
    topic = topic_factory("edge", partitions=1, configs={"max.message.bytes": "100000"})
    headers = (("trace", b"x" * 30), ("n", None))
    outcomes = {}
    for extra in (0, 1):
        value = b"v" * (100_000 - record_batch_bytes(b"k", b"", headers) - 10)
        while record_batch_bytes(b"k", value, headers) < 100_000 + extra:
            value += b"v"
        assert record_batch_bytes(b"k", value, headers) == 100_000 + extra
        producer = Producer({"bootstrap.servers": kafka_node.bootstrap, "message.max.bytes": 2_000_000,
                             "enable.idempotence": True})
        failures = []
        producer.produce(topic, key=b"k", value=value, headers=list(headers),
                         on_delivery=lambda error, _message: failures.append(error))
        producer.flush(30)
        outcomes[extra] = failures[0]
    assert outcomes[0] is None and outcomes[1] is not None and "too large" in outcomes[1].str().lower()


def test_repartition_and_new_timestamps_when_asked(admin, operator, topic_factory, kafka_node, local_cluster,
                                                   tmp_path):
    source, target = topic_factory("three", partitions=3), topic_factory("one", partitions=1)
    hour_ago = int(time.time() * 1000) - 3_600_000
    _produce(kafka_node.bootstrap, source, [(2, b"k", b"v", [], hour_ago)])
    exported = tmp_path / "three.csv"
    _export(source, "csv", exported, admin.username)
    refused = _import(target, exported, operator.username)
    assert refused["records"] == 0 and "partition 2 does not exist" in refused["bad_lines"][0]["reason"]
    moved = _import(target, exported, operator.username, "--repartition", "--new-timestamps")
    [(partition, _, key, value, _, timestamp)] = _raw(kafka_node.bootstrap, target, 1)
    assert moved["records"] == 1 and (partition, key, value) == (0, b"k", b"v") and timestamp > hour_ago + 3_000_000


record_bytes = st.one_of(st.none(), st.binary(max_size=300), st.text(max_size=60).map(str.encode),
                         st.binary(min_size=40_000, max_size=95_000))
generated = st.lists(st.tuples(st.integers(0, 1), record_bytes, record_bytes,
                               st.lists(st.tuples(st.sampled_from(["a", "a", "ü", ""]), record_bytes), max_size=3),
                               # up to the run's start: Kafka 4 refuses timestamps over an hour ahead of its clock
                               # (log.message.timestamp.after.max.ms)
                               st.one_of(st.none(), st.integers(0, int(time.time() * 1000)))),
                     min_size=1, max_size=6)


@hypothesis_settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(records=generated, fmt=st.sampled_from(FORMATS))
def test_generated_records_come_back_byte_for_byte(records, fmt, admin, operator, topic_factory, kafka_node,
                                                   local_cluster, tmp_path_factory):
    # Sized to the topic's own limit (the broker's default is covered above): batches of many generated records.
    limit = {"max.message.bytes": "200000", "retention.ms": "-1"}  # generated timestamps go back to 1970
    source, target = topic_factory("gen", 2, limit), topic_factory("gen-back", 2, limit)
    _produce(kafka_node.bootstrap, source, records)
    exported = tmp_path_factory.mktemp("gen") / f"out.{fmt}"
    _export(source, fmt, exported, admin.username)
    assert _import(target, exported, operator.username)["records"] == len(records)
    assert _content(_raw(kafka_node.bootstrap, target, 2)) == _content(_raw(kafka_node.bootstrap, source, 2))


CARD, SSN = "4111222233334444", "SSN-771-SECRET"


@pytest.fixture
def masked_cards(topic_factory, produce, admin, local_cluster):
    topic = topic_factory("export-masked", partitions=1)
    produce(topic, [(0, f"cust-{i}".encode(), json.dumps({"card": CARD, "n": i}).encode(),
                     [("ssn", SSN.encode()), ("trace", f"t{i}".encode())]) for i in range(4)])
    for select, target in (("jsonpath", "$.card"), ("header", "ssn")):
        call_command("masking", "add", "--topics", "export-masked-.*", "--select", select, "--target", target,
                     "--action", "keep_last" if select == "jsonpath" else "hide", "--actor", admin.username,
                     "--reason", "pii", stdout=StringIO())
    return topic


def _secrets_in(data: bytes) -> list[str]:
    forms = [CARD, SSN, base64.b64encode(CARD.encode()).decode()[:16], base64.b64encode(SSN.encode()).decode()[:16]]
    return [f for f in forms if f.encode() in data]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_viewers_masked_export_runs_and_holds_no_masked_byte(fmt, masked_cards, viewer, client_for, tmp_path):
    target = tmp_path / f"masked.{fmt}"
    _export(masked_cards, fmt, target, viewer.username)  # it raised UnboundLocalError before
    from_shell = target.read_bytes()
    from_page = b"".join(client_for(viewer).get(f"/clusters/local/messages/{masked_cards}/export/",
                                                {"format": fmt}).streaming_content)
    for data in (from_shell, from_page):
        assert _secrets_in(data) == [] and b"4444" in data and b"t3" in data
    event = AuditEvent.objects.filter(action="records.export", outcome="success").last()
    assert event.after["masked"] is True and event.after["records"] == 4


def test_a_masked_export_to_standard_output(masked_cards, viewer, monkeypatch):
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out))
    call_command("messages", "export", "--topic", masked_cards, "--as", "jsonl", "--actor", viewer.username,
                 stderr=StringIO())
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(rows) == 4 and all(r["masked"] == ["value", "header:ssn"] for r in rows)
    assert _secrets_in(out.getvalue()) == [] and json.loads(rows[0]["value"])["card"] == "************4444"
    assert rows[0]["decoded"]["value"]["card"] == "************4444" and rows[0]["headers"] == [["trace", "t0", "utf8"]]
