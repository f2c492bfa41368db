"""Kafka Connect through the API against a real worker: connectors, their actions and offsets answer what
`manage.py connect --format json` prints (which is what Connect's REST API answers, secrets masked); an offsets
change needs its preview's fingerprint and refuses a stale one; config as code exports, plans and applies
connectors with their secrets kept out of the file."""

from __future__ import annotations

import io
import json
import time

import pytest
import yaml
from django.core.management import call_command

from config_as_code.document import KIND
from console.accounts.roles import Role
from console.audit.models import AuditEvent
from tests.api.conftest import shell_json
from tests.connect.conftest import FILE_SINK

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
NAME = "api sink ☃ #2"


@pytest.fixture
def sink(connect_cluster, connect_rest, topic_factory, produce, tmp_path):
    from connect.models import ConnectCluster

    ConnectCluster.objects.filter(pk=connect_cluster.pk).update(operator_settings=["connection.*"])
    topic = topic_factory("api-connect")
    produce(topic, [(0, None, b"line", None)] * 3)
    config = {"connector.class": FILE_SINK, "topics": topic, "file": str(tmp_path / "out.txt"), "tasks.max": "1",
              "connection.password": "hunter2"}
    assert connect_rest("POST", "connectors", body={"name": NAME, "config": config})[0] == 201
    connect_rest.wait_state(NAME, "RUNNING")
    return topic, config


def test_connectors_answer_as_the_shell(sink, api_as, operator, connect_rest):
    from urllib.parse import quote

    from console.urlnames import escape_name

    topic, _ = sink
    api = api_as(operator, role=Role.OPERATOR)
    base = f"/clusters/local/connect/local/connectors/{quote(escape_name(NAME), safe='')}"
    assert api.get("/clusters/local/connect").json() == shell_json("connect", "clusters")
    listed = api.get("/clusters/local/connect/local/connectors").json()
    assert listed == shell_json("connect", "list")
    assert listed[NAME]["info"]["config"]["connection.password"] == "********"
    assert api.get(base).json() == shell_json("connect", "describe", NAME)
    # The sink commits what it wrote a moment after it writes it (offset.flush.interval.ms): the two answers are
    # compared once the offsets have stopped moving, not while one of them may still be the empty list.
    deadline = time.monotonic() + 60
    while connect_rest("GET", "connectors", NAME, "offsets")[1]["offsets"] != [
            {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 3}}]:
        assert time.monotonic() < deadline, "the sink did not commit its three records within 60 s"
        time.sleep(0.5)
    assert api.get(base + "/offsets").json() == shell_json("connect", "offsets", NAME)

    stopped = api.post(base + "/stop", {"reason": "offsets"}).json()
    assert stopped == connect_rest("GET", "connectors", NAME, "status")[1]
    assert stopped["connector"]["state"] == "STOPPED"
    change = {"strategy": "to-earliest", "topics": [topic]}
    preview = api.post(base + "/offsets/preview", change).json()
    assert preview == shell_json("connect", "offsets", NAME, "--to-earliest", "--topic", topic)
    assert preview["allowed"] and preview["partitions"][0]["after"] == {"kafka_offset": 0}

    stale = api.post(base + "/offsets", {**change, "fingerprint": "0000000000000000", "reason": "rewind"})
    assert stale.status_code == 409
    assert AuditEvent.objects.filter(action="connector.offsets.alter", outcome="refused").count() == 1
    done = api.post(base + "/offsets", {**change, "fingerprint": preview["fingerprint"], "reason": "rewind"})
    assert done.status_code == 200 and done.json() == connect_rest("GET", "connectors", NAME, "offsets")[1]
    assert done.json()["offsets"] == [{"partition": {"kafka_topic": topic, "kafka_partition": 0},
                                       "offset": {"kafka_offset": 0}}]


def test_connectors_as_code(sink, tmp_path, admin, connect_rest):
    text = io.StringIO()
    call_command("config", "export", stdout=text)
    exported = yaml.safe_load(text.getvalue())
    assert exported["connectors"]["local"][NAME]["connection.password"] == "********"
    assert "hunter2" not in text.getvalue()
    path = tmp_path / "connect.yaml"
    # The file as exported (other tests' connectors included), with one edit: the plan is exactly that edit.
    connectors = {"local": {**exported["connectors"]["local"],
                            NAME: {**exported["connectors"]["local"][NAME], "tasks.max": "2"}}}
    path.write_text(yaml.safe_dump({"kind": KIND, "version": 1, "connectors": connectors}))
    out = io.StringIO()
    call_command("config", "plan", str(path), "--format", "json", stdout=out)
    plan = json.loads(out.getvalue())
    assert [(c["action"], c["key"], c["after"]) for c in plan["changes"]] == [
        ("change", f"local/{NAME}", {"tasks.max": "2"})]
    call_command("config", "apply", str(path), "--if-unchanged", plan["fingerprint"], "--actor", admin.username,
                 "--reason", "two tasks", stdout=io.StringIO())
    status, answer = connect_rest("GET", "connectors", NAME)
    assert status == 200, answer
    config = answer["config"]
    assert config["tasks.max"] == "2" and config["connection.password"] == "hunter2"  # the masked secret was kept
    edit = AuditEvent.objects.get(action="connector.config.edit", outcome="success")
    assert edit.params["change_set"] and "hunter2" not in json.dumps([edit.params, edit.before, edit.after])
