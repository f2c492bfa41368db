"""The recorder on the real broker: scripted joins and leaves of both group protocols, restarts, sampling."""

import io
import json
import time
import uuid

import pytest
from django.core.management import call_command

from console.clusters.selectors import cluster_admin
from offsets.history import recorder
from offsets.models import GroupGeneration, RecorderPosition
from offsets.history.selectors import group_history
from tests.fixtures.members import Member

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def wait_members(group, clients, timeout=40.0):
    """Until the group's members are exactly `clients` and every partition is assigned (or it is empty)."""
    from gateway.kafka.reset import forget_clients
    from gateway.kafka.errors import KafkaGatewayError

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            described = cluster_admin("local").describe_groups([group])[group]
        except KafkaGatewayError:  # a slow answer while the group forms: ask again
            forget_clients()
            time.sleep(0.3)
            continue
        current = sorted(m.client_id for m in described.members)
        assigned = sum(len(m.assignment) for m in described.members)
        if current == sorted(clients) and (not clients or assigned == 4) and described.state in ("Stable", "Empty"):
            return
        time.sleep(0.3)
    raise AssertionError(f"{group} never reached members {clients}")


def script(kafka_node, topic_factory, protocol):
    group, topic = f"rec-{protocol}-{uuid.uuid4().hex[:6]}", topic_factory("rec", partitions=4)
    a = Member(kafka_node.bootstrap, group, topic, "app-a", protocol)
    wait_members(group, ["app-a"])
    b = Member(kafka_node.bootstrap, group, topic, "app-b", protocol)
    wait_members(group, ["app-a", "app-b"])
    a.leave()
    wait_members(group, ["app-b"])
    b.leave()
    wait_members(group, [])
    return group, topic


def record_everything():
    return recorder.record_from_topic("local", should_stop=lambda: False, until_caught_up=True)


def changes(history):
    """The script as the history tells it: members after each step, and who joined and left."""
    steps = []
    for entry in history:
        members = sorted(m["client_id"] for m in entry["members"])
        if steps and steps[-1][0] == members:
            continue  # the same membership again (e.g. an extra epoch while reconciling)
        steps.append((members, sorted(m["client_id"] for m in entry["joined"]),
                      sorted(m["client_id"] for m in entry["left"])))
    return steps


EXPECTED = [(["app-a"], ["app-a"], []), (["app-a", "app-b"], ["app-b"], []), (["app-b"], [], ["app-a"]),
            ([], [], ["app-b"])]


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_recorded_history_matches_the_script(kafka_node, topic_factory, local_cluster, protocol):
    group, topic = script(kafka_node, topic_factory, protocol)

    record_everything()
    history = group_history("local", group)

    assert changes(history) == EXPECTED
    key = "generation" if protocol == "classic" else "epoch"
    numbers = [entry[key] for entry in history]
    assert numbers == sorted(numbers) and all(not e["sampled"] for e in history)
    last_of_each_membership = {}
    for entry in history:
        owned = [tuple(p) for m in entry["members"] for p in m["assignment"]]
        assert len(owned) == len(set(owned))  # never one partition in two members' assignments
        assert all(m["host"] for m in entry["members"])
        last_of_each_membership[tuple(sorted(m["client_id"] for m in entry["members"]))] = sorted(owned)
    # A KIP-848 epoch may first assign nothing (topic metadata still resolving); the settled one covers all.
    for members, owned in last_of_each_membership.items():
        assert owned == ([(topic, p) for p in range(4)] if members else [])
    # Each membership of the script was waited on until Stable, so its last epoch settled, in seconds (every member
    # reported it at a heartbeat); classic generations have no duration: Kafka records no start of a rebalance.
    last_epochs = {tuple(sorted(m["client_id"] for m in e["members"])): e for e in history if e["members"]}
    settles = [e["settled_in_s"] for e in last_epochs.values()]
    if protocol == "consumer":
        assert all(s is not None and 0 <= s < 30 for s in settles), settles
    else:
        assert all(e["settled_in_s"] is None for e in history)


def test_a_restart_mid_stream_loses_and_duplicates_nothing(kafka_node, topic_factory, local_cluster):
    group, _ = script(kafka_node, topic_factory, "classic")

    while recorder.record_from_topic("local", should_stop=lambda: False, until_caught_up=True, max_records=3):
        pass  # a fresh recorder each time, from the saved positions, three records at a time

    assert changes(group_history("local", group)) == EXPECTED
    assert RecorderPosition.objects.filter(cluster="local").exists()
    before = GroupGeneration.objects.count()
    record_everything()  # nothing new: nothing added
    assert GroupGeneration.objects.count() == before


def test_sampling_fallback_marks_history_as_sampled(kafka_node, topic_factory, local_cluster):
    group, topic = f"sampled-{uuid.uuid4().hex[:6]}", topic_factory("smp", partitions=4)
    a = Member(kafka_node.bootstrap, group, topic, "app-a", "classic")
    wait_members(group, ["app-a"])
    recorder.sample_groups("local")
    recorder.sample_groups("local")  # unchanged: no new row
    a.leave()
    wait_members(group, [])
    recorder.sample_groups("local")

    history = group_history("local", group)
    assert [(sorted(m["client_id"] for m in e["members"]), e["sampled"]) for e in history] == [
        (["app-a"], True), ([], True)]


def test_group_history_command_and_timeline_on_the_group_page(kafka_node, topic_factory, local_cluster, client_for,
                                                              viewer, commit):
    group, topic = script(kafka_node, topic_factory, "classic")
    commit(group, {(topic, 0): 0})
    record_everything()

    out = io.StringIO()
    call_command("group_history", group, "--format", "json", stdout=out)
    history = json.loads(out.getvalue())
    assert [len(e["members"]) for e in history] == [1, 2, 1, 0]
    assert set(history[0]) == {"generation", "time", "protocol", "members", "joined", "left", "moved", "sampled", "settled_in_s",
                               "burst"}
    page = client_for(viewer).get(f"/clusters/local/groups/{group}/", {"tab": "history"}).content.decode()
    assert "Rebalance history" in page and "app-b@" in page


def test_commits_are_counted_once_per_group_across_restarts(kafka_node, topic_factory, local_cluster, commit):
    from datetime import UTC, datetime, timedelta

    from offsets.models import GroupCommitStat

    topic = topic_factory("commits", partitions=2)
    first, second = f"cnt-a-{uuid.uuid4().hex[:6]}", f"cnt-b-{uuid.uuid4().hex[:6]}"
    started = datetime.now(UTC) - timedelta(seconds=1)
    for i in range(5):
        commit(first, {(topic, 0): i, (topic, 1): i})  # one request, two commit records
    commit(second, {(topic, 0): 1})

    while recorder.record_from_topic("local", should_stop=lambda: False, until_caught_up=True, max_records=4):
        pass

    stats = {s.group: s for s in GroupCommitStat.objects.filter(group__in=[first, second])}
    assert (stats[first].commits, stats[second].commits) == (10, 1)
    assert started <= stats[first].last_commit_at <= stats[second].last_commit_at <= datetime.now(UTC)


def test_a_share_group_of_kafkas_share_consumer_is_recorded(kafka_node, topic_factory, produce, local_cluster):
    """Kafka's own VerifiableShareConsumer joins, consumes and leaves; the coordinator's share-group records in
    __consumer_offsets become the group's history: the member joined, then left."""
    import subprocess

    from devstack.kafka import java_classpath
    from devstack.tool_jvm import tool_jvm_options

    topic = topic_factory("recshare", partitions=2)
    produce(topic, [(i % 2, None, b"r%d" % i, None) for i in range(10)])
    group = f"rec-share-{uuid.uuid4().hex[:6]}"
    consumer, classpath = "org.apache.kafka.tools.VerifiableShareConsumer", java_classpath(kafka_node.libs)
    with tool_jvm_options(consumer, classpath, kafka_node.libs.parent) as jvm:
        subprocess.run(["java", "-Xmx256m", *jvm, "-cp", classpath, consumer,
                        "--bootstrap-server", kafka_node.bootstrap, "--topic", topic, "--group-id", group,
                        "--offset-reset-strategy", "earliest", "--max-messages", "10",
                        "--acknowledgement-mode", "sync"],  # "auto" waits a 5 s poll to acknowledge the last batch
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=True)
    deadline = time.monotonic() + 30
    while cluster_admin("local").describe_share_groups([group])[group].members:
        assert time.monotonic() < deadline, "the share consumer never left"
        time.sleep(0.5)
    record_everything()
    history = group_history("local", group)
    assert history and {entry["protocol"] for entry in history} == {"share"}
    joined = [m["client_id"] for entry in history for m in entry["joined"]]
    left = [m["client_id"] for entry in history for m in entry["left"]]
    assert len(joined) == 1 and left == joined, history
    assert any(entry["members"] and {a[0] for a in entry["members"][0]["assignment"]} == {topic}
               for entry in history), history


def test_the_commit_shortcut_reads_the_brokers_commit_records_as_the_full_decoder_does(kafka_node, topic_factory,
                                                                                         local_cluster):
    """Offset commits of a classic and a consumer-protocol member (with metadata), as the broker wrote them."""
    from confluent_kafka import Consumer, TopicPartition

    from console.clusters.selectors import cluster_connection, cluster_get
    from gateway.kafka.records_io.reader import TopicTail
    from offsets.history.records import OffsetCommit, commit_group, commit_timestamp, decode_record

    topic = topic_factory("shortcut", partitions=2)
    groups = {protocol: f"short-{protocol}-{uuid.uuid4().hex[:6]}" for protocol in ("classic", "consumer")}
    for protocol, group in groups.items():
        consumer = Consumer({"bootstrap.servers": kafka_node.bootstrap, "group.id": group,
                             "group.protocol": protocol, "enable.auto.commit": False})
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while not consumer.assignment():
            assert time.monotonic() < deadline, f"{group} was never assigned"
            consumer.poll(0.2)
        consumer.commit(offsets=[TopicPartition(topic, p, 3 + p, metadata="é" * 20) for p in range(2)],
                        asynchronous=False)
        consumer.close()

    tail = TopicTail(cluster_connection(cluster_get("local")), recorder.OFFSETS_TOPIC, {}, timeout=10)
    records, deadline = [], time.monotonic() + 30
    try:
        while not (records and tail.caught_up()):
            assert time.monotonic() < deadline, "never read __consumer_offsets to its end"
            records += tail.poll(5000, timeout=1)
    finally:
        tail.close()

    ours = {group: [] for group in groups.values()}
    for record in records:
        full = decode_record(record.key, record.value)
        if not isinstance(full, OffsetCommit):
            assert commit_group(record.key) is None
            continue
        assert commit_group(record.key) == full.group.encode()
        if record.value is not None:
            assert commit_timestamp(record.value) == full.commit_timestamp
        if full.group in ours:
            ours[full.group].append((full.topic, full.partition, full.offset))
    assert all(sorted(found) == [(topic, 0, 3), (topic, 1, 4)] for found in ours.values()), ours


def test_a_batch_counts_commits_alike_through_the_shortcut_and_the_full_decoder():
    """No broker: records built from the schemas. Commits the shortcut reads, commits only the full decoder reads
    (a compact metadata string of 127 bytes or more), tombstones, a damaged record and a group metadata record,
    spread over two batches: one count and the latest time per group, and the positions after each batch."""
    from gateway.kafka.records_io.reader import RawRecord, TailBatch
    from offsets.models import GroupCommitStat
    from tests.offsets.history.test_records import W, commit_value, group_value

    def commit_key(group):
        return W().i16(1).s(group).s("orders").i32(0).done()

    first = [
        RawRecord(0, 10, 5_000, commit_key("g-a"), commit_value(3, timestamp=1_700_000_002_000)),
        RawRecord(0, 11, 5_001, commit_key("g-a"), commit_value(4, "m" * 200, timestamp=1_700_000_003_000)),
        RawRecord(1, 40, 5_002, commit_key("g-a"), commit_value(1, timestamp=1_700_000_001_000)),
        RawRecord(1, 41, 5_003, commit_key("g-b"), None),  # tombstone: not a commit
        RawRecord(1, 42, 5_004, commit_key("g-b"), commit_value(3)[:-3]),  # damaged: skipped
        RawRecord(2, 7, 5_005, W().i16(2).s("g-c").done(), group_value(3, [])),
    ]
    second = [RawRecord(0, 12, 5_006, commit_key("g-a"), commit_value(3, timestamp=1_700_000_000_500)),
              RawRecord(0, 13, 5_007, commit_key("g-b"), commit_value(0, timestamp=0))]  # 0: the record's time

    assert recorder.store_batch("local", TailBatch.of(first), {}, str) == 1  # g-c's generation 5, emptied
    assert recorder.store_batch("local", TailBatch.of(second), {}, str) == 0

    assert list(GroupGeneration.objects.values_list("group", "generation", "members")) == [("g-c", 5, [])]
    stats = {s.group: (s.commits, round(s.last_commit_at.timestamp() * 1000))
             for s in GroupCommitStat.objects.filter(cluster="local")}
    assert stats == {"g-a": (4, 1_700_000_003_000), "g-b": (1, 5_007)}
    assert dict(RecorderPosition.objects.filter(cluster="local").values_list("partition", "next_offset")) == {
        0: 14, 1: 43, 2: 8}
