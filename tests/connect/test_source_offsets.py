"""Done-when of issue 33: a FileStreamSource connector's source offsets edited as JSON (with the preview's
guarantees) and reset, each audited and each visible in what the connector produces next."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from connect.connector_offsets.services import ALTER, RESET
from console.audit.models import AuditEvent
from tests.connect.conftest import FILE_SOURCE, read_values

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
NAME = "lines ☃ source"


def _fingerprint(html: str) -> str:
    return re.search(r'name="fingerprint" value="([0-9a-f]+)"', html).group(1)


def source_offsets(connect_rest, name: str) -> list[dict]:
    status, body = connect_rest("GET", "connectors", name, "offsets")
    assert status == 200
    return body["offsets"]


def test_source_offsets_edited_then_reset(connect_operator, connect_rest, topic_factory, tmp_path, kafka_node):
    web = connect_operator
    topic = topic_factory("lines")
    source = tmp_path / "in.txt"
    lines = [f"line-{i}" for i in range(5)]
    source.write_text("".join(line + "\n" for line in lines))
    assert connect_rest("POST", "connectors", body={"name": NAME, "config": {
        "connector.class": FILE_SOURCE, "file": str(source), "topic": topic}})[0] == 201
    assert read_values(kafka_node.bootstrap, topic, at_least=5) == lines
    end = len(source.read_bytes())
    partition = {"filename": str(source)}
    connect_rest.wait(lambda: source_offsets(connect_rest, NAME) == [{"partition": partition,
                                                                      "offset": {"position": end}}],
                      what="the source offset at the file's end")

    action = reverse("connect:action", args=["local", "local", NAME])
    preview_url = reverse("connect:offsets-preview", args=["local", "local", NAME])
    execute_url = reverse("connect:offsets-execute", args=["local", "local", NAME])
    assert web.post(action, {"action": "stop", "reason": "re-read", "next": "offsets"}).status_code == 302
    connect_rest.wait_state(NAME, "STOPPED")
    page = web.get(reverse("connect:offsets", args=["local", "local", NAME])).content.decode()
    assert "position" in page and str(end) in page

    # Bad JSON never reaches Connect: the message says what is wrong, and nothing changes.
    bad = web.post(preview_url, {"mode": "json", "offsets_json": '[{"partition": {"filename": 1}, "offset": 3}]'})
    assert bad.status_code == 400 and "Entry 1: &quot;offset&quot; must be an object" in bad.content.decode()

    position = len("".join(line + "\n" for line in lines[:3]).encode())
    edited = json.dumps([{"partition": partition, "offset": {"position": position}}])
    change = {"mode": "json", "offsets_json": edited}
    preview = web.post(preview_url, change).content.decode()
    assert f"&#x27;position&#x27;: {end}" in preview and f"&#x27;position&#x27;: {position}" in preview
    done = web.post(execute_url, {**change, "fingerprint": _fingerprint(preview), "reason": "re-emit 3 and 4",
                                  "confirm": NAME})
    assert done.status_code == 302
    assert source_offsets(connect_rest, NAME) == [{"partition": partition, "offset": {"position": position}}]
    event = AuditEvent.objects.get(action=ALTER, outcome="success")
    assert event.before == [{"partition": partition, "offset": {"position": end}}]
    assert event.after == [{"partition": partition, "offset": {"position": position}}]

    assert web.post(action, {"action": "resume", "reason": "go"}).status_code == 302
    assert read_values(kafka_node.bootstrap, topic, at_least=7) == lines + lines[3:]
    connect_rest.wait(lambda: source_offsets(connect_rest, NAME)[0]["offset"] == {"position": end},
                      what="the source offset back at the file's end")

    # Reset: every offset forgotten, the audit keeping them; the connector then reads the file from its start.
    assert web.post(action, {"action": "stop", "reason": "from scratch", "next": "offsets"}).status_code == 302
    connect_rest.wait_state(NAME, "STOPPED")
    preview = web.post(preview_url, {"mode": "reset"}).content.decode()
    assert "deleted" in preview
    reset = web.post(execute_url, {"mode": "reset", "fingerprint": _fingerprint(preview), "reason": "from scratch",
                                   "confirm": NAME})
    assert reset.status_code == 302
    assert source_offsets(connect_rest, NAME) == []
    event = AuditEvent.objects.get(action=RESET, outcome="success")
    assert event.before == [{"partition": partition, "offset": {"position": end}}] and event.after == []
    assert web.post(action, {"action": "resume", "reason": "go"}).status_code == 302
    assert read_values(kafka_node.bootstrap, topic, at_least=12) == lines + lines[3:] + lines
