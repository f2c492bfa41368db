"""`manage.py record_groups` records every registered cluster, follows the registry without a restart, and
restarts a recorder that died; each cluster says how complete its history is, or why it is not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from console.paths import PROJECT_DIR
from tests.fixtures.celery import celery_env
from tests.fixtures.secured_kafka import SECURED_PASSWORD_ENV, secured_settings

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


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


def _recorders(supervisor_pid: int) -> dict[str, int]:
    """The recorder processes this test's supervisor started, by cluster: its own children only, so a recorder of
    another stack on the machine (`make run`'s) is never taken for one of them."""
    found = subprocess.run(["pgrep", "-a", "-P", str(supervisor_pid)], capture_output=True, text=True)
    recorders = {}
    for line in found.stdout.splitlines():
        pid, _, command = line.partition(" ")
        words = command.split()
        if words[-3:-1] == ["record_groups", "--cluster"]:
            recorders[words[-1]] = int(pid)
    return recorders


def _running(pid: int) -> bool:
    """Whether `pid` is still a recorder (a zombie or a pid used again since is not)."""
    try:
        return b"record_groups" in open(f"/proc/{pid}/cmdline", "rb").read()
    except FileNotFoundError:
        return False


def test_every_registered_cluster_is_recorded_and_the_registry_is_followed(
        local_cluster, secured_kafka, redis_node, kafka_node, tmp_path):
    from console.clusters.models import Cluster
    from console.clusters.selectors import cluster_admin
    from offsets.models import GroupGeneration, RecorderStatus
    from offsets.history.selectors import recorder_health

    Cluster.objects.create(name="secured", **secured_settings(secured_kafka))
    Cluster.objects.create(name="limited", **secured_settings(secured_kafka, user="limited"))
    _grant_describe_only(secured_kafka, "User:limited")
    topic, group = f"rec-{uuid.uuid4().hex[:8]}", f"rec-group-{uuid.uuid4().hex[:6]}"
    cluster_admin("secured").create_topic(topic, partitions=2, replication_factor=1, configs={})

    log_path = tmp_path / "recorder.log"
    with open(log_path, "w") as log:
        supervisor = subprocess.Popen([sys.executable, "manage.py", "record_groups"], cwd=PROJECT_DIR,
                                      env=celery_env(redis_node, kafka_node), stdout=log, stderr=subprocess.STDOUT)
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

        # A cluster registered while it runs gets a recorder without a restart (here the mTLS listener).
        Cluster.objects.create(name="late", **secured_settings(secured_kafka, listener="mtls"))
        _wait_for(lambda: RecorderStatus.objects.filter(cluster="late", state="recording").exists(),
                  "a recorder for the cluster added meanwhile", log_path=log_path)

        # A recorder killed by a native abort is started again, and says so meanwhile.
        first = _wait_for(lambda: _recorders(supervisor.pid).get("late"), "the late cluster's recorder process")
        os.kill(first, signal.SIGABRT)
        second = _wait_for(lambda: (pid := _recorders(supervisor.pid).get("late")) and pid != first and pid,
                           "the killed recorder to be started again", log_path=log_path)
        assert second != first
        assert "Cluster 'late': The recorder process stopped (signal 6)" in open(log_path).read()

        # A removed cluster's recorder stops.
        Cluster.objects.filter(name="late").delete()
        _wait_for(lambda: "late" not in _recorders(supervisor.pid), "the removed cluster's recorder to stop",
                  log_path=log_path)
        _wait_for(lambda: not _running(second), "the removed cluster's recorder to end", log_path=log_path)
        assert supervisor.poll() is None
        recorders = _recorders(supervisor.pid)
        assert {"local", "secured", "limited"} <= set(recorders)
    finally:
        supervisor.send_signal(signal.SIGTERM)
        supervisor.wait(30)
    # Once the supervisor is gone its children are no longer its own: the pids seen above say whether they ended.
    assert [cluster for cluster, pid in recorders.items() if _running(pid)] == []
