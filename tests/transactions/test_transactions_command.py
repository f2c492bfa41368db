"""`manage.py transactions` against Kafka's own TransactionsCommand on the same broker state: an open
transaction, its producers, and the refusal to abort a transaction that is not hanging."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent

pytestmark = [pytest.mark.kafka, pytest.mark.parity, pytest.mark.django_db]

TOOL = "org.apache.kafka.tools.TransactionsCommand"


def tool_rows(node, *args: str) -> tuple[list[str], list[list[str]]]:
    """The tool's table: header and rows, cells split on its tabs."""
    result = node.run_tool(TOOL, "--bootstrap-server", node.bootstrap, *args)
    assert result.returncode == 0, result.stderr
    lines = [[cell.strip() for cell in line.split("\t")[:-1]] for line in result.stdout.splitlines() if line.strip()]
    return lines[0], lines[1:]


def our_rows(capsys, *args: str) -> tuple[list[str], list[list[str]]]:
    call_command("transactions", *args)
    lines = [[cell.strip() for cell in line.split("\t")[:-1]] for line in capsys.readouterr().out.splitlines()
             if line.strip()]
    return lines[0], lines[1:]


def test_list_and_describe_match_kafkas_tool(kafka_node, open_transaction, capsys):
    topic, transactional_id = open_transaction
    tool_header, tool = tool_rows(kafka_node, "list")
    header, ours = our_rows(capsys, "list")
    assert header == tool_header == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
    # Transactions of earlier tests may still move from Prepare* to Complete* between the two listings.
    settle = {"PrepareAbort": "CompleteAbort", "PrepareCommit": "CompleteCommit"}
    assert sorted(r[:3] + [settle.get(r[3], r[3])] for r in ours) == sorted(r[:3] + [settle.get(r[3], r[3])]
                                                                            for r in tool)
    assert [row for row in ours if row[0] == transactional_id][0][3] == "Ongoing"

    tool_header, tool = tool_rows(kafka_node, "describe", "--transactional-id", transactional_id)
    header, ours = our_rows(capsys, "describe", "--transactional-id", transactional_id)
    assert header == tool_header
    duration = header.index("TransactionDurationMs")
    assert [c for i, c in enumerate(ours[0]) if i != duration] == [c for i, c in enumerate(tool[0]) if i != duration]
    assert abs(int(ours[0][duration]) - int(tool[0][duration])) < 30_000  # both measured from the same start
    assert ours[0][header.index("TopicPartitions")] in (f"{topic}-0,{topic}-1", f"{topic}-1,{topic}-0")

    call_command("transactions", "describe", "--transactional-id", transactional_id, "--format", "json")
    described = json.loads(capsys.readouterr().out)[0]
    assert described["state"] == "Ongoing"
    assert sorted(p["partition"] for p in described["partitions"]) == [0, 1]


def test_describe_producers_and_find_hanging_match_kafkas_tool(kafka_node, open_transaction, capsys):
    topic, _ = open_transaction
    for partition in ("0", "1"):
        tool_header, tool = tool_rows(kafka_node, "describe-producers", "--topic", topic, "--partition", partition)
        header, ours = our_rows(capsys, "describe-producers", "--topic", topic, "--partition", partition)
        assert header == tool_header and ours == tool
        # Only idempotent producers have state: the transactional one, whose transaction starts at offset 1.
        assert [row[-1] for row in ours] == ["1"]

    # Open, but its coordinator tracks it: not hanging, for the tool and for us.
    tool_header, tool = tool_rows(kafka_node, "find-hanging", "--topic", topic, "--max-transaction-timeout", "0")
    header, ours = our_rows(capsys, "find-hanging", "--topic", topic, "--max-transaction-timeout", "0")
    assert header == tool_header and ours == tool == []


def test_an_abort_of_a_transaction_that_is_not_hanging_is_refused_and_audited(open_transaction, make_user):
    topic, _ = open_transaction
    make_user("txadmin", "admin")
    make_user("txoperator", "operator")
    with pytest.raises(CommandError, match="is not hanging: its last write is .* within the 15 min"):
        call_command("transactions", "abort", "--topic", topic, "--partition", "0", "--start-offset", "1",
                     "--confirm", "1", "--actor", "txadmin", "--reason", "stuck readers")
    refusal = AuditEvent.objects.get(action="transaction.abort")
    assert refusal.outcome == "refused" and "not hanging" in refusal.error
    with pytest.raises(CommandError, match="No open transaction starts at offset 7"):
        call_command("transactions", "abort", "--topic", topic, "--partition", "0", "--start-offset", "7")
    with pytest.raises(CommandError, match="role|admin"):
        call_command("transactions", "abort", "--topic", topic, "--partition", "0", "--start-offset", "1",
                     "--max-transaction-timeout", "0", "--confirm", "1", "--actor", "txoperator", "--reason", "x")


def test_find_hanging_needs_a_scope_like_the_tool(local_cluster):
    with pytest.raises(CommandError, match="needs a topic or a broker id"):
        call_command("transactions", "find-hanging")


@pytest.mark.parametrize("listener", ["sasl_ssl", "mtls"])
def test_the_java_client_reaches_secured_clusters_with_the_console_settings(secured_kafka, listener, capsys, db):
    """SCRAM over TLS and mutual TLS: the librdkafka settings, translated, work for Kafka's Java Admin client;
    a user without the ACL gets the broker's refusal in one line."""
    from confluent_kafka import Producer

    from console.clusters.models import Cluster
    from tests.fixtures.secured_kafka import secured_settings

    Cluster.objects.create(name=f"secured-{listener}", **secured_settings(secured_kafka, listener=listener))
    transactional_id = f"secured-{listener}-{uuid.uuid4().hex[:6]}"
    producer = Producer({"bootstrap.servers": secured_kafka.bootstrap, "transactional.id": transactional_id})
    producer.init_transactions(15)
    call_command("transactions", "--cluster", f"secured-{listener}", "list", "--format", "json")
    listed = {t["transactional_id"]: t for t in json.loads(capsys.readouterr().out)}
    assert listed[transactional_id]["state"] == "Empty"

    Cluster.objects.create(name="limited-tx", **secured_settings(secured_kafka, user="limited"))
    call_command("transactions", "--cluster", "limited-tx", "list", "--format", "json")
    assert transactional_id not in capsys.readouterr().out  # the broker lists only ids the principal may describe
