"""`manage.py acls` against Kafka's own AclCommand on the same broker (which runs StandardAuthorizer): what one
creates the other lists identically, removal deletes exactly the previewed bindings, and every change is audited."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent

pytestmark = [pytest.mark.kafka, pytest.mark.parity, pytest.mark.django_db]

TOOL = "org.apache.kafka.tools.AclCommand"


def bindings(lines: list[str]) -> list[str]:
    return [line for line in lines if "(principal=" in line]


def tool_lines(node, *args: str) -> list[str]:
    result = node.run_tool(TOOL, "--bootstrap-server", node.bootstrap, *args)
    assert result.returncode == 0, result.stderr
    return [line.rstrip() for line in result.stdout.splitlines() if line.strip()]


def our_lines(capsys, *args: str) -> list[str]:
    call_command("acls", *args)
    return [line.rstrip() for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_tool_made_acls_list_the_same_here(kafka_node, local_cluster, capsys):
    principal = f"User:bob {uuid.uuid4().hex[:6]} ü"
    prefix = f"orders.{uuid.uuid4().hex[:6]}."
    tool_lines(kafka_node, "--add", "--allow-principal", principal, "--operation", "Read", "--operation", "Describe",
               "--topic", prefix, "--resource-pattern-type", "prefixed")
    tool_lines(kafka_node, "--add", "--deny-principal", principal, "--operation", "Read", "--group", "*")

    tool = tool_lines(kafka_node, "--list", "--principal", principal)
    ours = our_lines(capsys, "list", "--principal", principal)
    assert sorted(ours) == sorted(tool)
    assert len(bindings(ours)) == 3

    call_command("acls", "list", "--principal", principal, "--format", "json")
    listed = json.loads(capsys.readouterr().out)
    assert {(e["resource_type"], e["pattern_type"], e["operation"], e["permission"]) for e in listed} == {
        ("TOPIC", "PREFIXED", "READ", "ALLOW"), ("TOPIC", "PREFIXED", "DESCRIBE", "ALLOW"),
        ("GROUP", "LITERAL", "READ", "DENY")}

    # A topic under the prefix: both find the prefixed bindings that apply to it, and only those.
    topic = prefix + "eu"
    tool = tool_lines(kafka_node, "--list", "--topic", topic, "--resource-pattern-type", "match")
    ours = our_lines(capsys, "list", "--resource-type", "TOPIC", "--resource-name", topic)
    # Within a resource both print the bindings in the broker's order, which need not be stable between calls.
    assert sorted(line for line in ours if principal in line) == sorted(line for line in tool if principal in line)
    assert len([line for line in ours if principal in line]) == 2


def test_add_previews_then_creates_what_the_tool_lists(kafka_node, local_cluster, admin, capsys):
    principal = f"User:svc-{uuid.uuid4().hex[:6]}"
    topic = f"payments {uuid.uuid4().hex[:6]}"  # a space: any name Kafka accepts in an ACL
    add = ["add", "--principal", principal, "--resource-type", "TOPIC", "--resource-name", topic,
           "--operation", "WRITE", "--operation", "DESCRIBE"]

    preview = our_lines(capsys, *add)
    assert preview[0] == "Would create 2 binding(s) (0 exist already):"
    assert bindings(tool_lines(kafka_node, "--list", "--principal", principal)) == []
    assert AuditEvent.objects.count() == 0

    with pytest.raises(CommandError, match="--reason is required"):
        call_command("acls", *add, "--confirm", "--actor", admin.username)
    our_lines(capsys, *add, "--confirm", "--actor", admin.username, "--reason", "new payments service")
    assert sorted(our_lines(capsys, "list", "--principal", principal)) == sorted(
        tool_lines(kafka_node, "--list", "--principal", principal))
    event = AuditEvent.objects.get(action="acl.create", outcome="success")
    assert event.target == f"principal:{principal}" and event.actor_name == admin.username
    assert sorted(b["operation"] for b in event.after["present"]) == ["DESCRIBE", "WRITE"]

    # Asking again changes nothing and says so.
    with pytest.raises(CommandError, match="exists already"):
        call_command("acls", *add, "--operation", "WRITE", "--confirm", "--actor", admin.username, "--reason", "again")


def test_remove_deletes_exactly_the_previewed_bindings(kafka_node, local_cluster, admin, operator, capsys):
    principal, other = f"User:old-{uuid.uuid4().hex[:6]}", f"User:keep-{uuid.uuid4().hex[:6]}"
    for who in (principal, other):
        tool_lines(kafka_node, "--add", "--allow-principal", who, "--operation", "Read", "--operation", "Describe",
                   "--group", "billing")

    with pytest.raises(CommandError, match="never matches every binding"):
        call_command("acls", "remove")
    preview = our_lines(capsys, "remove", "--principal", principal)
    assert preview[0] == "Would delete 2 binding(s):" and preview[-1].startswith("Run again with --confirm 2")
    with pytest.raises(CommandError, match="role"):
        call_command("acls", "remove", "--principal", principal, "--confirm", "2", "--actor", operator.username,
                     "--reason", "cleanup")
    with pytest.raises(CommandError, match="Type the number of bindings \\(2\\)"):
        call_command("acls", "remove", "--principal", principal, "--confirm", "3", "--actor", admin.username,
                     "--reason", "cleanup")
    assert len(bindings(tool_lines(kafka_node, "--list", "--principal", principal))) == 2

    our_lines(capsys, "remove", "--principal", principal, "--confirm", "2", "--actor", admin.username,
              "--reason", "service retired")
    assert bindings(tool_lines(kafka_node, "--list", "--principal", principal)) == []
    assert len(bindings(tool_lines(kafka_node, "--list", "--principal", other))) == 2
    event = AuditEvent.objects.get(action="acl.delete", outcome="success")
    assert len(event.after["deleted"]) == 2 and event.after["present"] == []
