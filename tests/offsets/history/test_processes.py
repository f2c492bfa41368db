"""RECORDER_PROCESSES above 1: the clusters spread over that many recorder processes, each one's clusters on
threads; a process that dies is started again and the others are left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

import pytest
from django.core.management.base import CommandError

from console.paths import PROJECT_DIR
from offsets.history.processes import MSG_PROCESS_DIED
from offsets.history.supervisor import shard_of
from offsets.management.commands.record_groups import MSG_BAD_SHARD, parse_shard
from tests.fixtures.celery import celery_env


def test_a_cluster_has_one_process_whatever_else_is_registered():
    names = [f"cluster-{i}" for i in range(200)]
    shards = [shard_of(name, 3) for name in names]
    assert set(shards) == {0, 1, 2}  # spread over all of them
    assert [shard_of(name, 3) for name in reversed(names)] == shards[::-1]  # by its own name only
    assert all(shard_of(name, 1) == 0 for name in names)


@pytest.mark.parametrize("value", ["2/2", "3/2", "-1/2", "1", "a/b", "1/2/3", "1/0", "99999/100000", " 0/2"])
def test_a_bad_shard_is_refused(value):
    with pytest.raises(CommandError) as refused:
        parse_shard(value)
    assert str(refused.value) == MSG_BAD_SHARD.format(value=value)


def test_a_shard_is_parsed():
    assert parse_shard("0/1") == (0, 1) and parse_shard("3/4") == (3, 4)


def _children(pid: int) -> dict[int, int]:
    """This test's parent's recorder processes by shard: its own children only, never another stack's recorder."""
    found = subprocess.run(["pgrep", "-a", "-P", str(pid)], capture_output=True, text=True)
    children = {}
    for line in found.stdout.splitlines():
        child, _, command = line.partition(" ")
        words = command.split()
        if words[-2:-1] == ["--shard"] and "record_groups" in words:
            children[int(words[-1].split("/")[0])] = int(child)
    return children


def _wait_for(condition, what: str, log_path, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}\n{open(log_path).read()[-3000:]}")


@pytest.mark.kafka
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_clusters_spread_over_processes_and_one_process_dying_leaves_the_others(
        local_cluster, redis_node, kafka_node, tmp_path):
    from console.clusters.models import Cluster
    from offsets.models import RecorderStatus

    # Registrations of the one broker, at least one in each of the two processes.
    names = ["local"]
    for i in range(50):
        name = f"spread-{i}"
        if shard_of(name, 2) != shard_of("local", 2):
            names.append(name)
            break
    for name in names[1:]:
        Cluster.objects.create(name=name, bootstrap_servers=kafka_node.bootstrap)
    victim, bystander = shard_of(names[1], 2), shard_of("local", 2)

    log_path = tmp_path / "recorder.log"
    env = {**celery_env(redis_node, kafka_node), "RECORDER_PROCESSES": "2"}
    with open(log_path, "w") as log:
        parent = subprocess.Popen([sys.executable, "manage.py", "record_groups"], cwd=PROJECT_DIR, env=env,
                                  stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for(lambda: RecorderStatus.objects.filter(cluster__in=names, state="recording").count() == 2,
                  "both clusters recording", log_path)
        children = _wait_for(lambda: (found := _children(parent.pid)) and len(found) == 2 and found,
                             "two recorder processes", log_path)
        killed_at = datetime.now(UTC)
        os.kill(children[victim], signal.SIGABRT)
        died = MSG_PROCESS_DIED.format(how="signal 6", delay=5)
        _wait_for(lambda: f"Recorder process {victim}/2: {died}" in log_path.read_text(), "the death reported",
                  log_path)
        again = _wait_for(lambda: (pid := _children(parent.pid).get(victim)) and pid != children[victim] and pid,
                          "the process started again", log_path, timeout=30)
        _wait_for(lambda: RecorderStatus.objects.filter(cluster=names[1], state="recording",
                                                        updated_at__gt=killed_at).exists(),
                  "its cluster recording again", log_path)
        assert _children(parent.pid) == {victim: again, bystander: children[bystander]}
        assert parent.poll() is None
    finally:
        parent.send_signal(signal.SIGTERM)
        parent.wait(30)
    assert parent.returncode == 0
