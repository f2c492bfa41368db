"""`manage.py users` against Kafka's ConfigCommand on the same broker: SCRAM credentials made by either are
described alike, the password never reaches the audit log, and quotas set by the tool are listed as it lists them."""

from __future__ import annotations

import io
import json
import uuid

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent

pytestmark = [pytest.mark.kafka, pytest.mark.parity, pytest.mark.django_db]

TOOL = "kafka.admin.ConfigCommand"


def tool_lines(node, *args: str) -> list[str]:
    result = node.run_tool(TOOL, "--bootstrap-server", node.bootstrap, *args)
    assert result.returncode == 0, result.stderr
    return [line.rstrip() for line in result.stdout.splitlines() if line.strip()]


def our_lines(capsys, *args: str) -> list[str]:
    call_command("users", *args)
    return [line.rstrip() for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_credentials_set_here_are_described_as_the_tool_describes_them(kafka_node, local_cluster, admin, capsys,
                                                                       monkeypatch):
    user = f"app-{uuid.uuid4().hex[:6]}"
    password = "s3cret-" + uuid.uuid4().hex
    monkeypatch.setenv("NEW_KAFKA_PASSWORD", password)
    tool_lines(kafka_node, "--alter", "--add-config", "SCRAM-SHA-256=[iterations=8192,password=pw-256]",
               "--entity-type", "users", "--entity-name", user)

    our_lines(capsys, "set-password", "--user", user, "--password-env", "NEW_KAFKA_PASSWORD",
              "--actor", admin.username, "--reason", "new service")
    tool = tool_lines(kafka_node, "--describe", "--entity-type", "users", "--entity-name", user)
    ours = [line for line in our_lines(capsys, "list") if f"'{user}'" in line]
    assert ours == tool
    assert sorted(tool[0].split(" are ")[1].split(", ")) == ["SCRAM-SHA-256=iterations=8192",
                                                             "SCRAM-SHA-512=iterations=4096"]

    event = AuditEvent.objects.get(action="user.credential.set", outcome="success")
    assert event.before == {"credentials": [{"mechanism": "SCRAM-SHA-256", "iterations": 8192}]}
    assert len(event.after["credentials"]) == 2
    stored = json.dumps([list(AuditEvent.objects.values())], default=str)
    assert password not in stored

    # From standard input too; a password on the command line is not an option.
    monkeypatch.setattr("sys.stdin", io.StringIO("other-" + password + "\n"))
    our_lines(capsys, "set-password", "--user", user, "--mechanism", "SCRAM-SHA-256", "--password-stdin",
              "--iterations", "4096", "--actor", admin.username, "--reason", "rotate")
    described = tool_lines(kafka_node, "--describe", "--entity-type", "users", "--entity-name", user)
    assert sorted(described[0].split(" are ")[1].split(", ")) == ["SCRAM-SHA-256=iterations=4096",
                                                                  "SCRAM-SHA-512=iterations=4096"]
    with pytest.raises(CommandError, match="exactly one of --password-env VAR or --password-stdin"):
        call_command("users", "set-password", "--user", user, "--actor", admin.username, "--reason", "x")


def test_delete_needs_the_name_and_an_admin(kafka_node, local_cluster, admin, operator, capsys, monkeypatch):
    user = f"gone-{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("NEW_KAFKA_PASSWORD", "pw-" + uuid.uuid4().hex)
    our_lines(capsys, "set-password", "--user", user, "--password-env", "NEW_KAFKA_PASSWORD",
              "--actor", admin.username, "--reason", "temp")
    with pytest.raises(CommandError, match="role"):
        call_command("users", "delete", "--user", user, "--mechanism", "SCRAM-SHA-512", "--confirm", user,
                     "--actor", operator.username, "--reason", "x")
    with pytest.raises(CommandError, match=f"Type the user name \\({user}\\)"):
        call_command("users", "delete", "--user", user, "--mechanism", "SCRAM-SHA-512", "--confirm", "nope",
                     "--actor", admin.username, "--reason", "x")
    with pytest.raises(CommandError, match="has no SCRAM-SHA-256 credential"):
        call_command("users", "delete", "--user", user, "--mechanism", "SCRAM-SHA-256", "--confirm", user,
                     "--actor", admin.username, "--reason", "x")
    assert [line for line in our_lines(capsys, "list") if f"'{user}'" in line]

    our_lines(capsys, "delete", "--user", user, "--mechanism", "SCRAM-SHA-512", "--confirm", user,
              "--actor", admin.username, "--reason", "temp no more")
    assert not [line for line in our_lines(capsys, "list") if f"'{user}'" in line]
    assert AuditEvent.objects.get(action="user.credential.delete", outcome="success").after == {"credentials": []}


def test_quotas_set_by_the_tool_are_listed_as_it_lists_them(kafka_node, local_cluster, capsys):
    user, client = f"quota-{uuid.uuid4().hex[:6]}", f"client {uuid.uuid4().hex[:6]}"
    tool_lines(kafka_node, "--alter", "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152",
               "--entity-type", "users", "--entity-name", user)
    tool_lines(kafka_node, "--alter", "--add-config", "request_percentage=50", "--entity-type", "users",
               "--entity-name", user, "--entity-type", "clients", "--entity-name", client)
    tool_lines(kafka_node, "--alter", "--add-config", "producer_byte_rate=10485760", "--entity-type", "clients",
               "--entity-default")

    ours = our_lines(capsys, "quotas")
    by_user = tool_lines(kafka_node, "--describe", "--entity-type", "users", "--entity-name", user)
    assert [line for line in ours if line.startswith(f"Quota configs for user-principal '{user}' are")] == by_user
    pair = [line for line in ours if f"client-id '{client}'" in line]
    assert pair == [f"Quota configs for user-principal '{user}', client-id '{client}' are request_percentage=50.0"]
    assert [line for line in ours if line.startswith("Quota configs for the default client-id are")] == tool_lines(
        kafka_node, "--describe", "--entity-type", "clients", "--entity-default")
    call_command("users", "quotas", "--format", "json")
    listed = json.loads(capsys.readouterr().out)
    default = [q for q in listed if q["client_id_is_default"] and q["user"] is None]
    assert default and default[0]["values"] == {"producer_byte_rate": 10485760.0}
