"""Exports on the real broker: the browse page's and the search's results streamed as JSON lines, CSV and Avro
in chunks, equal to what a plain consumer reads, audited with the range and the count; the shell writes the same
file; bad input is refused before a byte is sent; a large range offers a Spark replay with the same offsets."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import uuid
from io import StringIO

import fastavro
import pytest
from confluent_kafka import Consumer, TopicPartition
from django.core.management import call_command

from console.audit.models import AuditEvent

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _raw(bootstrap: str, topic: str, partitions: int) -> dict[tuple[int, int], tuple[bytes, bytes]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"raw-{uuid.uuid4().hex}",
                         "enable.partition.eof": True, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    found, ended = {}, set()
    while len(ended) < partitions:
        for m in consumer.consume(500, timeout=1):
            if m.error():
                ended.add(m.partition())
                continue
            found[(m.partition(), m.offset())] = (m.key(), m.value())
    consumer.close()
    return found


@pytest.fixture
def export_topic(topic_factory, produce, local_cluster, kafka_node):
    topic = topic_factory("export", partitions=3)
    produce(topic, [(i % 3, f"k{i}".encode(),
                     json.dumps({"n": i, "note": 'a,"b"\nc'}).encode() if i % 2 else f"plain {i}".encode(),
                     [("trace", f"t{i}".encode())]) for i in range(300)])
    return topic, _raw(kafka_node.bootstrap, topic, 3)


def test_export_streams_each_format_equal_to_a_raw_read(client_for, viewer, export_topic, monkeypatch):
    monkeypatch.setattr("records.export.CHUNK_RECORDS", 40)  # many chunks, as a large export goes
    topic, raw = export_topic
    client = client_for(viewer)
    url = f"/clusters/local/messages/{topic}/export/"
    got = client.get(url, {"format": "jsonl", "max_matches": "1000"})
    assert got.streaming and got["Content-Disposition"] == f'attachment; filename="{topic}.jsonl"'
    lines = [json.loads(line) for line in b"".join(got.streaming_content).split(b"\n")[:-1]]
    assert {(r["partition"], r["offset"]) for r in lines} == set(raw) and len(lines) == 300
    for r in lines:
        key, value = raw[(r["partition"], r["offset"])]
        assert (r["key"], r["key_encoding"], r["value"], r["value_encoding"]) == (
            key.decode(), "utf8", value.decode(), "utf8")
        assert r.get("decoded", {}).get("value") == (json.loads(value) if value.startswith(b"{") else None)
        assert r["topic"] == topic and r["headers"] == [["trace", f"t{key.decode()[1:]}", "utf8"]]
    got = client.get(url, {"format": "csv", "max_matches": "1000", "value": "plain"})
    table = list(csv.DictReader(io.StringIO(b"".join(got.streaming_content).decode(), newline="")))
    assert len(table) == 150 and all(raw[(int(r["partition"]), int(r["offset"]))][1] == r["value"].encode()
                                     for r in table)
    got = client.get(url, {"format": "avro", "max_matches": "1000", "partitions": "1"})
    read = list(fastavro.reader(io.BytesIO(b"".join(got.streaming_content))))
    assert len(read) == 100 and all(r["partition"] == 1 for r in read)
    assert all(r["value"] == raw[(1, r["offset"])][1] for r in read)
    events = AuditEvent.objects.filter(action="records.export", outcome="success", actor_name=viewer.username)
    assert [e.after["records"] for e in events.order_by("seq")] == [300, 150, 100]
    last = events.order_by("seq").last()
    assert last.params["range"] == {"1": [0, 100]} and last.params["format"] == "avro"


def test_export_refusals_and_the_browse_and_search_links(client_for, viewer, operator, export_topic, settings):
    topic, raw = export_topic
    client = client_for(viewer)
    url = f"/clusters/local/messages/{topic}/export/"
    assert client.get(url, {"format": "xlsx"}).status_code == 400
    too_many = client.get(url, {"format": "csv", "max_matches": "5000000"})
    assert too_many.status_code == 400 and "at most" in too_many.content.decode()
    assert client.get(url, {"format": "csv", "value_regex": "(a"}).status_code == 400
    assert not AuditEvent.objects.filter(action="records.export").exists()
    page = client.get(f"/clusters/local/topics/{topic}/messages/", {"partition": 2, "offset": 10, "limit": 5})
    link = html.unescape(re.search(r'href="([^"]+format=jsonl)"', page.content.decode()).group(1))
    lines = b"".join(client.get(link).streaming_content).split(b"\n")[:-1]
    assert [json.loads(line)["offset"] for line in lines] == [10, 11, 12, 13, 14]
    settings.EXPORT_SPARK_ABOVE = 100
    found = client.get(f"/clusters/local/messages/{topic}/search/", {"run": "1", "value": "plain"}).content.decode()
    assert re.search(r'href="[^"]+/export/\?[^"]*value=plain[^"]*format=avro"', found)
    replay = html.unescape(re.search(r'href="([^"]+/replays/new/[^"]+)"', found).group(1))
    form = client_for(operator).get(replay).content.decode()
    assert "offsets:0=0,1=0,2=0" in form and "offsets:0=100,1=100,2=100" in form


def test_export_in_the_shell(viewer, export_topic, tmp_path):
    topic, raw = export_topic
    target = tmp_path / "out.csv"
    err = StringIO()
    call_command("messages", "export", "--topic", topic, "--as", "csv", "--output", str(target), "--key", "k1",
                 "--actor", viewer.username, stderr=err, stdout=StringIO())
    table = list(csv.DictReader(target.open(newline="")))
    assert {r["key"] for r in table} == {k.decode() for k, _ in raw.values() if b"k1" in k}
    assert "record(s) written" in err.getvalue() and not (tmp_path / "out.csv.part").exists()
    event = AuditEvent.objects.get(action="records.export", outcome="success", source="cli")
    assert event.after["records"] == len(table) and event.params["filter"] == {"key_contains": "k1"}
