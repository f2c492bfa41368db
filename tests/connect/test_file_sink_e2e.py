"""Done-when of issue 33, through the pages against the real worker: a FileStreamSink connector created from the
plugin's form (Connect's validation errors shown first for a bad config), run, stopped, its offsets altered to an
earlier offset with a preview and an audit event, the revert restoring the exact offsets from the audit page,
then resumed: the file shows the records again from there."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils.html import escape

from connect.connector_offsets.services import ALTER, MSG_MOVED, MSG_NOT_STOPPED
from console.audit.models import AuditEvent
from tests.connect.conftest import FILE_SINK, wait_lines

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
NAME = "orders → file #1 <b>"


def _fingerprint(html: str) -> str:
    return re.search(r'name="fingerprint" value="([0-9a-f]+)"', html).group(1)


def sink_offset(connect_rest, name: str, topic: str) -> int | None:
    status, body = connect_rest("GET", "connectors", name, "offsets")
    assert status == 200
    found = [e["offset"]["kafka_offset"] for e in body["offsets"] if e["partition"]["kafka_topic"] == topic]
    return found[0] if found else None


def test_file_sink_from_the_page_to_the_revert(connect_operator, connect_rest, topic_factory, produce, tmp_path,
                                               kafka_node):
    web = connect_operator
    topic = topic_factory("orders")
    out = tmp_path / "sink.txt"
    create = reverse("connect:create", args=["local", "local"])
    form = web.get(create, {"plugin": FILE_SINK})
    assert form.status_code == 200 and 'name="cfg:file"' in form.content.decode()

    # A bad configuration: Connect's own words beside the fields, and nothing created.
    bad = web.post(create, {"plugin": FILE_SINK, "cfg:name": NAME, "cfg:tasks.max": "many", "cfg:file": str(out)})
    assert bad.status_code == 400
    page = bad.content.decode()
    assert 'data-field="tasks.max"' in page and "Connect refused the configuration" in page
    assert NAME not in connect_rest("GET", "connectors")[1]

    created = web.post(create, {"plugin": FILE_SINK, "cfg:name": NAME, "cfg:tasks.max": "1", "cfg:topics": topic,
                                "cfg:file": str(out), "reason": "e2e"})
    assert created.status_code == 302
    assert created["Location"] == reverse("connect:connector", args=["local", "local", NAME])
    connect_rest.wait_state(NAME, "RUNNING")
    values = [f"order-{i}" for i in range(10)]
    produce(topic, [(0, None, v.encode(), None) for v in values])
    assert wait_lines(out, 10) == values
    connect_rest.wait(lambda: sink_offset(connect_rest, NAME, topic) == 10, what="the sink's commit of offset 10")
    detail = web.get(created["Location"]).content.decode()
    assert "&lt;b&gt;" in detail and "<b>" not in detail.split("<h1>", 1)[1].split("</h1>", 1)[0]
    assert f"connect-{NAME}".replace("<", "&lt;").replace(">", "&gt;") in detail  # its consumer group, linked

    action = reverse("connect:action", args=["local", "local", NAME])
    preview_url = reverse("connect:offsets-preview", args=["local", "local", NAME])
    execute_url = reverse("connect:offsets-execute", args=["local", "local", NAME])
    change = {"mode": "strategy", "strategy": "to-offset", "value": "4", "topics": topic}

    # Running: the preview says so and the change is refused (and the refusal audited).
    running = web.post(preview_url, change).content.decode()
    assert "changes offsets only of a STOPPED connector" in running
    refused = web.post(execute_url, {**change, "fingerprint": _fingerprint(running) if "fingerprint" in running
                                     else "x", "reason": "too early", "confirm": NAME})
    assert refused.status_code == 409
    assert escape(MSG_NOT_STOPPED.format(name=NAME, state="RUNNING")) in refused.content.decode()
    assert AuditEvent.objects.filter(action=ALTER, outcome="refused").count() == 1

    assert web.post(action, {"action": "stop", "reason": "rewind", "next": "offsets"}).status_code == 302
    connect_rest.wait_state(NAME, "STOPPED")
    preview = web.post(preview_url, change)
    html = preview.content.decode()
    assert preview.status_code == 200 and "kafka_offset&#x27;: 10" in html and "kafka_offset&#x27;: 4" in html
    fingerprint = _fingerprint(html)

    # Offsets that moved since the preview: refused, nothing written.
    connect_rest("PATCH", "connectors", NAME, "offsets", body={"offsets": [
        {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 9}}]})
    moved = web.post(execute_url, {**change, "fingerprint": fingerprint, "reason": "rewind", "confirm": NAME})
    assert moved.status_code == 409 and escape(MSG_MOVED.format(name=NAME)) in moved.content.decode()
    assert sink_offset(connect_rest, NAME, topic) == 9
    connect_rest("PATCH", "connectors", NAME, "offsets", body={"offsets": [
        {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 10}}]})

    fingerprint = _fingerprint(web.post(preview_url, change).content.decode())
    done = web.post(execute_url, {**change, "fingerprint": fingerprint, "reason": "replay from 4", "confirm": NAME})
    assert done.status_code == 302
    assert sink_offset(connect_rest, NAME, topic) == 4
    event = AuditEvent.objects.filter(action=ALTER, outcome="success").get()
    partition = {"kafka_topic": topic, "kafka_partition": 0}
    assert event.before == [{"partition": partition, "offset": {"kafka_offset": 10}}]
    assert event.after == [{"partition": partition, "offset": {"kafka_offset": 4}}]
    assert event.target == f"connector:local/{NAME}" and event.reason == "replay from 4"

    # The revert, from the audit page: a preview, then exactly the offsets before.
    audit_page = web.get(reverse("audit:detail", args=[event.seq])).content.decode()
    revert_url = reverse("connect:offsets-revert", args=["local", event.seq])
    assert revert_url in audit_page
    revert_page = web.get(revert_url).content.decode()
    assert "kafka_offset&#x27;: 10" in revert_page
    reverted = web.post(revert_url, {"fingerprint": _fingerprint(revert_page), "reason": "undo", "confirm": NAME})
    assert reverted.status_code == 302
    assert sink_offset(connect_rest, NAME, topic) == 10
    revert_event = AuditEvent.objects.filter(action=ALTER, outcome="success").order_by("-seq").first()
    assert revert_event.params["revert_of"] == event.seq
    assert revert_event.after == [{"partition": partition, "offset": {"kafka_offset": 10}}]

    # Earlier again, resumed: the file shows the records again from offset 4.
    fingerprint = _fingerprint(web.post(preview_url, change).content.decode())
    assert web.post(execute_url, {**change, "fingerprint": fingerprint, "reason": "replay", "confirm": NAME}
                    ).status_code == 302
    assert web.post(action, {"action": "resume", "reason": "go"}).status_code == 302
    lines = wait_lines(out, 16)
    assert lines == values + values[4:]
