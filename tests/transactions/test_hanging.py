"""A real hanging transaction: a broker loses its `__transaction_state` log while a transaction is open, so no
coordinator will ever write the partition's marker and read_committed readers stop at its start. The console
finds it as Kafka's tool does, previews the abort, aborts it, audits it, and the readers move on."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent
from tests.fixtures.faults import kill_broker, retry_as_a_person_would, start_broker

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.django_db]

TOOL = "org.apache.kafka.tools.TransactionsCommand"
OPEN_TRANSACTION = """
import sys, time
from confluent_kafka import Producer
producer = Producer({"bootstrap.servers": sys.argv[1], "transactional.id": "lost-" + str(time.time_ns()),
                     "transaction.timeout.ms": 60000})
producer.init_transactions(15)
producer.begin_transaction()
for i in range(4):
    producer.produce(sys.argv[2], value=f"pending-{i}".encode(), partition=0)
producer.flush(15)
print("open", flush=True)
time.sleep(600)
"""


def _committed_values(bootstrap: str, topic: str) -> list[str]:
    """What a read_committed consumer reads of partition 0 within a few seconds."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex}",
                         "isolation.level": "read_committed", "enable.partition.eof": True})
    values = []
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        for _ in range(40):
            message = consumer.poll(0.25)
            if message is None:
                continue
            if message.error():
                if message.error().code() == KafkaError._PARTITION_EOF:
                    break
                raise AssertionError(message.error())
            values.append(message.value().decode())
        return values
    finally:
        consumer.close()


def until_answered(call, within_s: float = 60.0):
    """A broker that just restarted loads its coordinators for a while; a person reloads until it answers."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return retry_as_a_person_would(call)
        except CommandError as exc:
            if "did not answer" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(1)


@pytest.fixture
def hanging(fragile, make_user):
    """Partition 0 of a topic on `fragile`: two committed records, a transaction of 4 records whose coordinator
    state was lost, then 3 more plain records that read_committed readers cannot reach."""
    from confluent_kafka import Producer

    from console.clusters.selectors import cluster_admin

    topic = f"hanging-{uuid.uuid4().hex[:8]}"
    cluster_admin("fragile").create_topic(topic, partitions=1, replication_factor=1, configs={})
    plain = Producer({"bootstrap.servers": fragile.bootstrap})
    for value in ("before-0", "before-1"):
        plain.produce(topic, value=value.encode(), partition=0)
    plain.flush(15)
    del plain
    # The producing application crashes mid-transaction (a process of its own, killed), then the broker loses
    # its transaction state: no coordinator will ever end the transaction.
    writer = subprocess.Popen([sys.executable, "-c", OPEN_TRANSACTION, fragile.bootstrap, topic],
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "open", "the transactional writer did not start"
    writer.kill()
    writer.wait(10)
    kill_broker(fragile)
    for state in fragile.log_dir.glob("__transaction_state-*"):
        shutil.rmtree(state)
    start_broker(fragile)

    after = Producer({"bootstrap.servers": fragile.bootstrap})
    for value in ("after-0", "after-1", "after-2"):
        after.produce(topic, value=value.encode(), partition=0)
    after.flush(15)
    make_user("oncall", "admin")
    return topic


def test_a_hanging_transaction_is_found_previewed_aborted_and_audited(fragile, hanging, capsys):
    topic = hanging
    assert _committed_values(fragile.bootstrap, topic) == ["before-0", "before-1"]  # stuck at the open transaction

    tool = fragile.run_tool(TOOL, "--bootstrap-server", fragile.bootstrap, "find-hanging", "--topic", topic,
                            "--max-transaction-timeout", "0")
    assert tool.returncode == 0, tool.stderr
    tool_rows = [[c.strip() for c in line.split("\t")[:-1]] for line in tool.stdout.splitlines()[1:] if line.strip()]
    until_answered(lambda: call_command("transactions", "--cluster", "fragile", "find-hanging", "--topic", topic,
                                        "--max-transaction-timeout", "0"))
    ours = [[c.strip() for c in line.split("\t")[:-1]] for line in capsys.readouterr().out.splitlines()[1:]
            if line.strip()]
    assert len(tool_rows) == 1 and ours == tool_rows
    producer_id, start_offset = ours[0][2], ours[0][5]
    assert start_offset == "2"

    call_command("transactions", "--cluster", "fragile", "abort", "--topic", topic, "--partition", "0",
                 "--start-offset", start_offset, "--max-transaction-timeout", "0", "--format", "json")
    preview = json.loads(capsys.readouterr().out)
    assert preview["producer"]["producer_id"] == int(producer_id)
    assert (preview["last_stable_offset"], preview["log_end_offset"], preview["waiting_records"]) == (2, 9, 7)

    call_command("transactions", "--cluster", "fragile", "abort", "--topic", topic, "--partition", "0",
                 "--start-offset", start_offset, "--max-transaction-timeout", "0", "--confirm", producer_id,
                 "--actor", "oncall", "--reason", "INC-42: readers stuck behind a lost transaction")
    assert "Aborted. Last stable offset now 10" in capsys.readouterr().out  # 9 + the abort marker

    events = AuditEvent.objects.filter(action="transaction.abort").order_by("seq")
    assert [e.outcome for e in events] == ["intent", "success"]
    assert events[0].before["last_stable_offset"] == 2 and events[1].after["last_stable_offset"] == 10
    assert events[1].after["open_transactions"] == []
    assert _committed_values(fragile.bootstrap, topic) == ["before-0", "before-1", "after-0", "after-1", "after-2"]
    assert fragile.run_tool(TOOL, "--bootstrap-server", fragile.bootstrap, "find-hanging", "--topic", topic,
                            "--max-transaction-timeout", "0").stdout.splitlines()[1:] == []
