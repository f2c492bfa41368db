"""`manage.py record_groups` records every registered cluster in one process, a thread each; it follows the
registry without a restart, retries a cluster whose recorder failed without touching the others, notices a thread
that hangs, and a process killed mid-recording loses and duplicates no history once started again."""

from __future__ import annotations

import os
import random
import signal
import struct
import subprocess
import sys
import threading
import time
import uuid

import pytest

from console.paths import PROJECT_DIR
from offsets.history import supervisor as sup
from tests.fixtures.celery import celery_env
from tests.fixtures.secured_kafka import SECURED_PASSWORD_ENV, secured_settings

def _wait_for(condition, what: str, timeout: float = 60.0, log_path=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.5)
    tail = open(log_path).read()[-3000:] if log_path else ""
    raise AssertionError(f"timed out waiting for {what}\n{tail}")


def _grant_describe_only(secured_kafka, principal: str) -> None:
    """Lets `principal` list and describe groups and topics, but not read any topic (so not __consumer_offsets)."""
    from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient, ResourcePatternType,
                                       ResourceType)

    admin = AdminClient({"bootstrap.servers": secured_kafka.bootstrap})
    bindings = [AclBinding(kind, name, ResourcePatternType.LITERAL, principal, "*", AclOperation.DESCRIBE,
                           AclPermissionType.ALLOW)
                for kind, name in ((ResourceType.GROUP, "*"), (ResourceType.TOPIC, "*"),
                                   (ResourceType.BROKER, "kafka-cluster"))]
    for future in admin.create_acls(bindings, request_timeout=10).values():
        future.result(15)


def _rebalance_on_secured(secured_kafka, topic: str, group: str) -> None:
    """A real classic consumer joins the group, gets its partitions, commits and leaves: two generations."""
    from confluent_kafka import Consumer

    registration = secured_settings(secured_kafka)
    consumer = Consumer({**registration["client_config"], "bootstrap.servers": registration["bootstrap_servers"],
                         "sasl.password": os.environ[SECURED_PASSWORD_ENV], "group.id": group,
                         "auto.offset.reset": "earliest", "session.timeout.ms": 6000})
    consumer.subscribe([topic])
    deadline = time.monotonic() + 30
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(0.5)
    assert consumer.assignment(), "the consumer was never assigned its partitions"
    consumer.close()


def _start_recorder(redis_node, kafka_node, log_path) -> subprocess.Popen:
    with open(log_path, "a") as log:
        return subprocess.Popen([sys.executable, "manage.py", "record_groups"], cwd=PROJECT_DIR,
                                env=celery_env(redis_node, kafka_node), stdout=log, stderr=subprocess.STDOUT)


def _recorder_children(pid: int) -> list[str]:
    """Child processes of `pid` running record_groups: its own children only, never another stack's recorder."""
    found = subprocess.run(["pgrep", "-a", "-P", str(pid)], capture_output=True, text=True)
    return [line for line in found.stdout.splitlines() if "record_groups" in line]


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(30)


@pytest.mark.kafka
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_every_registered_cluster_is_recorded_in_one_process_and_the_registry_is_followed(
        local_cluster, secured_kafka, redis_node, kafka_node, tmp_path, monkeypatch):
    from console.clusters.models import Cluster
    from console.clusters.selectors import cluster_admin
    from gateway.kafka.errors import MSG_MISSING_SECRET
    from offsets.models import GroupGeneration, RecorderStatus
    from offsets.history.selectors import recorder_health

    Cluster.objects.create(name="secured", **secured_settings(secured_kafka))
    Cluster.objects.create(name="limited", **secured_settings(secured_kafka, user="limited"))
    _grant_describe_only(secured_kafka, "User:limited")
    # A registration whose secret the recorder's environment lacks: its recorder fails on every start.
    missing_env = f"CONSOLE_SECRET_TEST_UNSET_{uuid.uuid4().hex[:8].upper()}"
    monkeypatch.delenv(missing_env, raising=False)
    unset = secured_settings(secured_kafka)
    Cluster.objects.create(name="unset", **{**unset, "secret_env": {"sasl.password": missing_env}})
    topic, group = f"rec-{uuid.uuid4().hex[:8]}", f"rec-group-{uuid.uuid4().hex[:6]}"
    cluster_admin("secured").create_topic(topic, partitions=2, replication_factor=1, configs={})

    log_path = tmp_path / "recorder.log"
    recorder = _start_recorder(redis_node, kafka_node, log_path)
    try:
        _rebalance_on_secured(secured_kafka, topic, group)
        _wait_for(lambda: GroupGeneration.objects.filter(cluster="secured", group=group).exists(),
                  "the secured cluster's rebalance history", log_path=log_path)
        _wait_for(lambda: RecorderStatus.objects.filter(cluster="local", state="recording",
                                                        recorded_up_to__isnull=False).exists(),
                  "the local cluster's recorder", log_path=log_path)
        assert recorder_health("secured").text.startswith("History recorded up to")

        limited = _wait_for(lambda: RecorderStatus.objects.filter(cluster="limited", state="sampling").first(),
                            "the limited principal's recorder to fall back to sampling", log_path=log_path)
        assert "may not read __consumer_offsets" in limited.detail
        assert "may not read __consumer_offsets" in recorder_health("limited").text

        # The failing cluster is reported with its reason and retried, with a growing backoff.
        missing = MSG_MISSING_SECRET.format(cluster="unset", env=missing_env, key="sasl.password")
        failed = [sup.MSG_FAILED.format(how=missing, delay=delay) for delay in sup.RESTART_BACKOFF_S[1:]]
        _wait_for(lambda: RecorderStatus.objects.filter(cluster="unset", state="waiting", detail__in=failed).exists(),
                  "the failing cluster's status", log_path=log_path)
        _wait_for(lambda: all(f"Cluster 'unset': {message}" in log_path.read_text() for message in failed[:2]),
                  "a second try of the failing cluster", log_path=log_path)

        # A cluster registered while it runs gets a recorder without a restart (here the mTLS listener); its
        # settings changed, its recorder starts again with them; removed, it stops. The others are left alone.
        Cluster.objects.create(name="late", **secured_settings(secured_kafka, listener="mtls"))
        _wait_for(lambda: RecorderStatus.objects.filter(cluster="late", state="recording").exists(),
                  "a recorder for the cluster added meanwhile", log_path=log_path)
        Cluster.objects.filter(name="late").update(**secured_settings(secured_kafka))
        _wait_for(lambda: log_path.read_text().count("Recording cluster 'late' ") == 2,
                  "the changed cluster's recorder to start again", log_path=log_path)
        assert "Cluster 'late' changed: restarting its recorder with the new settings" in log_path.read_text()
        # The old thread ended before the new one started: from here on, only the new one writes.
        RecorderStatus.objects.filter(cluster="late").delete()
        _wait_for(lambda: RecorderStatus.objects.filter(cluster="late", state="recording").exists(),
                  "the changed cluster's recorder to record over SASL_SSL", log_path=log_path)
        Cluster.objects.filter(name="late").delete()
        _wait_for(lambda: "Cluster 'late' was removed: stopping its recorder" in log_path.read_text(),
                  "the removed cluster's recorder to stop", log_path=log_path)

        assert recorder.poll() is None
        assert _recorder_children(recorder.pid) == []  # every cluster in this one process
        text = log_path.read_text()
        for name in ("local", "secured", "limited"):
            assert text.count(f"Recording cluster '{name}' ") == 1, f"{name}'s recorder was started again"
        assert text.count("Recording cluster 'late' ") == 2
        assert text.count("Recording cluster 'unset' ") >= 2
    finally:
        _stop(recorder)
    assert recorder.returncode == 0


def _commit_records(bootstrap: str, groups: set[str]) -> dict[str, int]:
    """Offset commits of `groups` in __consumer_offsets, counted by a plain consumer reading it to its end and
    parsing the record keys itself (an offset commit key is version 0 or 1, then the group id as a length-prefixed
    string); a commit whose value is null (an offset deleted) is not one."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"count-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    partitions = consumer.list_topics("__consumer_offsets", timeout=10).topics["__consumer_offsets"].partitions
    ends = {p: consumer.get_watermark_offsets(TopicPartition("__consumer_offsets", p), timeout=10)[1]
            for p in partitions}
    consumer.assign([TopicPartition("__consumer_offsets", p, 0) for p in partitions])
    counts = dict.fromkeys(groups, 0)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        positions = {tp.partition: tp.offset for tp in consumer.position(
            [TopicPartition("__consumer_offsets", p) for p in partitions])}
        if all(positions[p] >= end for p, end in ends.items() if end > 0):
            break
        for message in consumer.consume(10_000, timeout=0.5):
            if message.error() or message.value() is None or message.key() is None:
                continue
            key = message.key()
            (version,) = struct.unpack_from(">h", key)
            if version not in (0, 1):
                continue
            (length,) = struct.unpack_from(">h", key, 2)
            name = key[4:4 + length].decode()
            if name in counts:
                counts[name] += 1
    else:
        raise AssertionError("__consumer_offsets was not read to its end")
    consumer.close()
    return counts


class Committers:
    """Groups committing offsets on the broker over and over from a thread, as busy applications do."""

    def __init__(self, bootstrap: str, topic: str, groups: list[str]) -> None:
        from confluent_kafka import Consumer

        self.consumers = [Consumer({"bootstrap.servers": bootstrap, "group.id": g, "enable.auto.commit": False})
                          for g in groups]
        self.topic, self.done = topic, threading.Event()
        self.thread = threading.Thread(target=self._commit, daemon=True)
        self.thread.start()

    def _commit(self):
        from confluent_kafka import TopicPartition

        offset = 0
        while not self.done.is_set():
            offset += 1
            for consumer in self.consumers:
                consumer.commit(offsets=[TopicPartition(self.topic, p, offset) for p in range(2)],
                                asynchronous=False)
            time.sleep(0.005)

    def stop(self):
        if not self.done.is_set():
            self.done.set()
            self.thread.join(30)
            for consumer in self.consumers:
                consumer.close()


@pytest.mark.kafka
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_recorder_killed_mid_recording_loses_and_duplicates_nothing(
        local_cluster, redis_node, kafka_node, topic_factory, tmp_path):
    from console.clusters.models import Cluster
    from offsets.models import GroupCommitStat

    clusters = ["local", "local-b", "local-c"]  # three registrations of one broker: three threads, three sets of rows
    for name in clusters[1:]:
        Cluster.objects.create(name=name, bootstrap_servers=kafka_node.bootstrap)
    topic = topic_factory("rec-kill", partitions=2)
    groups = [f"rec-kill-{uuid.uuid4().hex[:6]}-{i}" for i in range(3)]

    def stored(cluster: str) -> dict[str, int]:
        rows = dict(GroupCommitStat.objects.filter(cluster=cluster, group__in=groups).values_list("group", "commits"))
        return {g: rows.get(g, 0) for g in groups}

    log_path = tmp_path / "recorder.log"
    committers = Committers(kafka_node.bootstrap, topic, groups)
    recorder = None
    try:
        for kill in range(3):
            recorder = _start_recorder(redis_node, kafka_node, log_path)
            before = {c: sum(stored(c).values()) for c in clusters}
            _wait_for(lambda: all(sum(stored(c).values()) > before[c] for c in clusters),
                      "every cluster to record more commits", log_path=log_path)
            time.sleep(random.uniform(0.5, 2.5))  # somewhere among its batches
            os.kill(recorder.pid, signal.SIGKILL)
            recorder.wait(30)
            with open(log_path, "a") as log:
                log.write(f"--- killed ({kill + 1}) ---\n")
        time.sleep(1)  # the applications go on committing while the recorder is down
        committers.stop()
        expected = _commit_records(kafka_node.bootstrap, set(groups))
        assert all(expected.values())
        assert any(stored(c) != expected for c in clusters), "nothing was left to record after the last kill"
        recorder = _start_recorder(redis_node, kafka_node, log_path)
        _wait_for(lambda: all(stored(c) == expected for c in clusters), "the history to match the topic",
                  log_path=log_path)
        time.sleep(3)  # and it stays so: nothing is recorded a second time once caught up
        assert {c: stored(c) for c in clusters} == dict.fromkeys(clusters, expected)
        assert "--- killed (3) ---" in log_path.read_text()
    finally:
        committers.stop()
        if recorder is not None:
            _stop(recorder)


# The pool itself, with stand-in recorders on real threads and the real registry and statuses (no broker): what
# it does with a recorder that fails, hangs or is replaced does not depend on what the recorder reads.

class StandIns:
    """Recorder targets by cluster: `runs` counts starts; a cluster in `failing` raises at once; one in `stuck`
    blocks without looking at its stop flag until `release` is set; the others run until asked to stop."""

    def __init__(self, failing=(), stuck=()):
        self.failing, self.stuck = set(failing), set(stuck)
        self.runs: dict[str, int] = {}
        self.release = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, cluster, *, should_stop):
        with self.lock:
            self.runs[cluster] = self.runs.get(cluster, 0) + 1
        if cluster in self.failing:
            raise RuntimeError(f"{cluster} broke")
        if cluster in self.stuck:
            self.release.wait(30)
            return
        while not should_stop():
            time.sleep(0.02)


def _register(*names):
    from console.clusters.models import Cluster

    for name in names:
        Cluster.objects.create(name=name, bootstrap_servers="127.0.0.1:9")


def _until(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.django_db(transaction=True)
def test_a_failing_cluster_is_reported_and_retried_while_the_others_run_on(caplog):
    from offsets.models import RecorderStatus

    _register("good", "bad")
    targets = StandIns(failing={"bad"})
    pool = sup.RecorderSupervisor(target=targets, backoff_s=(0.1, 0.3, 0.6))
    try:
        pool.reconcile()
        good = pool.threads["good"]
        _until(lambda: not pool.threads["bad"].thread.is_alive())
        pool.reconcile()
        status = RecorderStatus.objects.get(cluster="bad")
        assert (status.state, status.detail) == ("waiting", sup.MSG_FAILED.format(how="bad broke", delay=0.3))
        assert "bad" not in pool.threads  # waiting out its backoff
        time.sleep(0.35)
        pool.reconcile()
        assert targets.runs["bad"] == 2
        _until(lambda: not pool.threads["bad"].thread.is_alive())
        pool.reconcile()
        assert RecorderStatus.objects.get(cluster="bad").detail == sup.MSG_FAILED.format(how="bad broke", delay=0.6)
        assert pool.threads["good"] is good and good.thread.is_alive() and targets.runs["good"] == 1
        assert not RecorderStatus.objects.filter(cluster="good").exists()
        assert "RuntimeError: bad broke" in caplog.text  # the traceback is logged
    finally:
        pool.stop_all()
    assert not good.thread.is_alive()


@pytest.mark.django_db(transaction=True)
def test_the_registry_is_followed_one_cluster_at_a_time():
    from console.clusters.models import Cluster

    _register("a", "b")
    targets = StandIns()
    pool = sup.RecorderSupervisor(target=targets)
    try:
        pool.reconcile()
        a, b = pool.threads["a"], pool.threads["b"]
        _register("c")
        pool.reconcile()
        assert pool.threads["a"] is a and pool.threads["b"] is b and pool.threads["c"].thread.is_alive()

        Cluster.objects.filter(name="a").update(bootstrap_servers="127.0.0.1:10")
        pool.reconcile()
        assert not a.thread.is_alive() and pool.threads["a"] is not a and pool.threads["a"].thread.is_alive()
        assert pool.threads["b"] is b and (targets.runs["a"], targets.runs["b"], targets.runs["c"]) == (2, 1, 1)

        Cluster.objects.filter(name="b").delete()
        pool.reconcile()
        assert not b.thread.is_alive() and "b" not in pool.threads and {"a", "c"} <= set(pool.threads)
    finally:
        pool.stop_all()


@pytest.mark.django_db(transaction=True)
def test_a_hung_thread_is_reported_and_never_run_twice(caplog):
    from console.clusters.models import Cluster
    from offsets.models import RecorderStatus

    _register("stuck", "fine")
    targets = StandIns(stuck={"stuck"})
    pool = sup.RecorderSupervisor(target=targets, hang_after_s=0.3)
    try:
        pool.reconcile()
        stuck = pool.threads["stuck"]
        time.sleep(0.4)
        pool.reconcile()
        detail = RecorderStatus.objects.get(cluster="stuck").detail
        assert detail.startswith("The recorder has not moved for") and "test_supervisor.py" in detail
        assert "in __call__" in caplog.text  # the hung thread's stack
        assert not RecorderStatus.objects.filter(cluster="fine").exists()  # looking at its flag: alive

        # Its settings change: it is asked to stop, but no second thread reads the cluster while it still runs.
        Cluster.objects.filter(name="stuck").update(bootstrap_servers="127.0.0.1:10")
        pool.reconcile()
        pool.reconcile()
        assert pool.threads["stuck"] is stuck and targets.runs["stuck"] == 1

        targets.release.set()
        _until(lambda: not stuck.thread.is_alive())
        pool.reconcile()
        assert pool.threads["stuck"] is not stuck and targets.runs["stuck"] == 2
    finally:
        targets.release.set()
        pool.stop_all()


@pytest.mark.django_db(transaction=True)
def test_running_it_reports_a_failure_at_once_and_stops_every_thread():
    from offsets.models import RecorderStatus

    _register("good", "bad")
    targets = StandIns(failing={"bad"})
    pool = sup.RecorderSupervisor(target=targets)
    stop = threading.Event()
    runner = threading.Thread(target=pool.run, kwargs={"should_stop": stop.is_set})
    runner.start()
    try:
        # Well before the next round (RECONCILE_EVERY_S): the loop looks for a thread that ended unasked.
        _until(lambda: RecorderStatus.objects.filter(cluster="bad", state="waiting").exists(),
               timeout=sup.RECONCILE_EVERY_S - 2)
        good = pool.threads["good"]
    finally:
        stop.set()
        runner.join(sup.STOP_GRACE_S + 5)
    assert not runner.is_alive() and not good.thread.is_alive() and pool.threads == {}
