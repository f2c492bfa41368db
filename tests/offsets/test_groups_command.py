"""`manage.py groups` against Kafka's own ConsumerGroupCommand on the same broker state."""

from __future__ import annotations

import json
import threading
import time
import uuid

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent

pytestmark = [pytest.mark.kafka, pytest.mark.parity, pytest.mark.django_db]

GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
COLUMNS = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
           "CLIENT-ID"]


def _tool_rows(kafka_node, *args: str) -> list[list[str]]:
    """Kafka's table, split on white space (no value here holds a space), header and notices left out."""
    result = kafka_node.run_tool(GROUP_COMMAND, "--bootstrap-server", kafka_node.bootstrap, *args)
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines() if line.strip()]
    header = next(i for i, line in enumerate(lines) if line and line[0] == "GROUP")
    return lines[header + 1:]


def _ours(*args: str, capsys) -> str:
    call_command("groups", *args)
    return capsys.readouterr().out


@pytest.fixture
def live_member(kafka_node, topic_factory, produce):
    """A topic of 3 partitions with records, and a real consumer in a group that owns them and committed on one."""
    from confluent_kafka import Consumer, TopicPartition

    topic = topic_factory("describe", partitions=3)
    produce(topic, [(p, None, b"x", None) for p in range(3)] * 5)
    group = f"describe-live-{uuid.uuid4().hex[:6]}"
    consumer = Consumer({"bootstrap.servers": kafka_node.bootstrap, "group.id": group, "client.id": "billing-app",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    deadline = time.monotonic() + 30
    while len(consumer.assignment()) < 3 and time.monotonic() < deadline:
        consumer.poll(0.2)
    consumer.commit(offsets=[TopicPartition(topic, 1, 3)], asynchronous=False)
    stop = threading.Event()
    thread = threading.Thread(target=lambda: [consumer.poll(0.2) for _ in iter(stop.is_set, True)], daemon=True)
    thread.start()
    yield topic, group
    stop.set()
    thread.join(5)
    consumer.close()


def test_describe_matches_kafkas_tool_for_an_active_and_an_empty_group(kafka_node, live_member, commit, capsys):
    topic, group = live_member
    empty = f"describe-empty-{uuid.uuid4().hex[:6]}"
    commit(empty, {(topic, 0): 2, (topic, 2): 5})

    for name in (group, empty):
        tool = sorted(_tool_rows(kafka_node, "--describe", "--group", name))
        ours_json = json.loads(_ours("describe", name, "--format", "json", capsys=capsys))
        ours = sorted([r["group"], r["topic"], str(r["partition"])] + [
            "-" if r[k] is None else str(r[k]) for k in
            ("current_offset", "log_end_offset", "lag", "consumer_id", "host", "client_id")] for r in ours_json)
        assert ours == tool, name
        table = [line.split() for line in _ours("describe", name, capsys=capsys).splitlines()
                 if line.strip() and not line.startswith("Consumer group")]
        assert table[0] == COLUMNS and sorted(table[1:]) == tool

    active = json.loads(_ours("describe", group, "--format", "json", capsys=capsys))
    assert {r["state"] for r in active} == {"Stable"} and {r["client_id"] for r in active} == {"billing-app"}
    assert {(r["partition"], r["current_offset"], r["lag"]) for r in active} == {(0, None, None), (1, 3, 2),
                                                                                   (2, None, None)}
    assert "has no active members" in _ours("describe", empty, capsys=capsys)


def test_members_state_and_list_match_kafkas_tool(kafka_node, live_member, capsys):
    topic, group = live_member

    tool_members = _tool_rows(kafka_node, "--describe", "--group", group, "--members")
    ours_members = [line.split() for line in _ours("describe", group, "--members", capsys=capsys).splitlines()[1:]]
    assert ours_members == tool_members

    tool_state = _tool_rows(kafka_node, "--describe", "--group", group, "--state")[0]
    ours_state = _ours("describe", group, "--state", capsys=capsys).splitlines()[1].split()
    assert ours_state[0] == tool_state[0] and ours_state[-2:] == tool_state[-2:]  # group, state, #members
    assert ours_state[1:3] == tool_state[1:3]  # coordinator host:port (id)

    tool_list = set(kafka_node.run_tool(GROUP_COMMAND, "--bootstrap-server", kafka_node.bootstrap,
                                        "--list").stdout.split())
    ours_list = set(_ours("list", capsys=capsys).split())
    assert group in tool_list and tool_list == ours_list


def test_delete_offsets_and_delete_keep_the_webs_guarantees(live_member, commit, admin, capsys):
    topic, group = live_member
    quiet = f"describe-quiet-{uuid.uuid4().hex[:6]}"
    commit(quiet, {(topic, 0): 2, (topic, 1): 4})

    assert "Would delete" in _ours("delete-offsets", quiet, "--topic", f"{topic}:0", capsys=capsys)
    _ours("delete-offsets", quiet, "--topic", f"{topic}:0", "--yes", "--actor", admin.username, "--reason", "x",
          capsys=capsys)
    remaining = json.loads(_ours("describe", quiet, "--format", "json", capsys=capsys))
    assert [(r["partition"], r["current_offset"]) for r in remaining] == [(1, 4)]

    with pytest.raises(CommandError, match="Stable"):  # the live group is refused, and the refusal changes nothing
        _ours("delete", group, "--yes", "--actor", admin.username, "--reason", "x", capsys=capsys)
    with pytest.raises(CommandError, match="needs the admin role|Unknown or inactive"):
        _ours("delete", quiet, "--yes", "--actor", "nobody", "--reason", "x", capsys=capsys)
    _ours("delete", quiet, "--yes", "--actor", admin.username, "--reason", "retired", capsys=capsys)
    with pytest.raises(CommandError, match="does not exist"):
        _ours("describe", quiet, capsys=capsys)
    assert AuditEvent.objects.filter(action="group.delete", target=f"group:{quiet}", outcome="success").exists()


def test_commands_take_any_group_name(topic_factory, produce, commit, capsys):
    topic = topic_factory("odd-names", partitions=1)
    produce(topic, [(0, None, b"x", None)] * 4)
    for group in (f"team/eu west {uuid.uuid4().hex[:4]}", f"<b>50% #1</b> \"q\" {uuid.uuid4().hex[:4]}",
                  f"ünïcødé {uuid.uuid4().hex[:4]}"):
        commit(group, {(topic, 0): 1})
        described = json.loads(_ours("describe", group, "--format", "json", capsys=capsys))
        assert [(r["group"], r["current_offset"], r["lag"]) for r in described] == [(group, 1, 3)]
        assert group in _ours("list", capsys=capsys).splitlines()
        call_command("reset_offsets", "--group", group, "--topic", topic, "--to-earliest")
        assert f"{group}" in capsys.readouterr().out
        call_command("group_history", group)
        capsys.readouterr()
