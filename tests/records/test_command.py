"""manage.py messages on the real broker: read and search print what the gateway read, JSON lines with a summary;
produce acts as a named operator and is audited."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent
from records.selectors import record_at

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _json_lines(*args: str) -> list[dict]:
    out = StringIO()
    call_command("messages", *args, "--format", "json", stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_produce_read_and_search_in_the_shell(operator, viewer, topic_factory, local_cluster):
    topic = topic_factory("shell-messages", partitions=2)
    for i in range(6):
        out = StringIO()
        call_command("messages", "produce", "--topic", topic, "--key", f"k{i}", "--value",
                     json.dumps({"n": i, "even": i % 2 == 0}), "--header", "src=shell", "--format", "json",
                     "--actor", operator.username, "--reason", "shell test", stdout=out)
        written = json.loads(out.getvalue())
        assert record_at("local", topic, written["partition"], written["offset"]).key == f"k{i}".encode()
    assert AuditEvent.objects.filter(action="record.produce", outcome="success", actor_name=operator.username,
                                      source="cli").count() == 6
    lines = _json_lines("read", "--topic", topic, "--limit", "4")
    assert len(lines) == 5 and lines[-1]["summary"]["matched"] == 4 and lines[-1]["summary"]["ended"] == "match limit"
    assert set(lines[0]) == {"partition", "offset", "timestamp", "key", "value", "headers"}
    assert lines[0]["headers"] == [["src", "shell"]] and isinstance(lines[0]["value"], dict)
    lines = _json_lines("search", "--topic", topic, "--field", "even=true")
    assert sorted(line["value"]["n"] for line in lines[:-1]) == [0, 2, 4]
    assert lines[-1]["summary"] | {"seconds": 0, "records_per_s": 0} == {
        "matched": 3, "scanned": 6, "range": 6, "covered": 6, "seconds": 0, "records_per_s": 0, "ended": "range"}
    with pytest.raises(CommandError, match="operator role"):
        call_command("messages", "produce", "--topic", topic, "--value", "x", "--actor", viewer.username,
                     "--reason", "no")
    with pytest.raises(CommandError, match="--reason is required"):
        call_command("messages", "produce", "--topic", topic, "--value", "x", "--actor", operator.username)


def test_clusters_list_shows_the_schema_registry(registry_cluster, schema_registry, admin):
    out = StringIO()
    call_command("clusters", "list", "--format", "json", stdout=out)
    listed = {c["name"]: c for c in json.loads(out.getvalue())}
    assert listed["local"]["schema_registry"] == schema_registry.url
    call_command("clusters", "add", "--name", "with-registry", "--bootstrap-servers", "127.0.0.1:1",
                 "--schema-registry", "https://registry.example:8081",
                 "--secret-env", "schema.registry.basic.auth.user.info=CONSOLE_SECRET_EXAMPLE_REGISTRY_AUTH",
                 "--actor", admin.username, "--reason", "registry", stdout=StringIO())
    with pytest.raises(CommandError, match="secret"):
        call_command("clusters", "add", "--name", "leaky", "--bootstrap-servers", "127.0.0.1:1",
                     "--config", "schema.registry.basic.auth.user.info=user:password",
                     "--actor", admin.username, "--reason", "no", stdout=StringIO())
    with pytest.raises(CommandError, match="http"):
        call_command("clusters", "add", "--name", "bad-url", "--bootstrap-servers", "127.0.0.1:1",
                     "--schema-registry", "registry.example:8081", "--actor", admin.username, "--reason", "no")
