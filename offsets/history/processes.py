"""RECORDER_PROCESSES above 1: that many recorder processes (`manage.py record_groups --shard K/N`), each recording
its share of the clusters on threads (offsets/history/supervisor.py), each started again with a backoff when it
exits. A native abort in one of them stops the recording of its clusters only; they go on from their stored
positions when it is back. This parent only starts and watches processes: it reads the registry to say, in each
of a dead process's clusters' status, that their recorder is down."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from console.clusters.models import Cluster
from console.paths import PROJECT_DIR
from offsets.history.recorder import recorder_status_note
from offsets.history.supervisor import HEALTHY_AFTER_S, RECONCILE_EVERY_S, RESTART_BACKOFF_S, STOP_GRACE_S, shard_of
from offsets.models import RecorderStatus

log = logging.getLogger(__name__)

# A child's own threads get STOP_GRACE_S to stop; it gets a little more before it is killed.
PROCESS_STOP_GRACE_S = STOP_GRACE_S + 5.0

MSG_PROCESS_DIED = "The recorder process of this cluster stopped ({how}); it starts again in {delay:g} s."


def _describe_exit(code: int) -> str:
    return f"signal {-code}" if code < 0 else f"exit code {code}"


def shard_command(shard: int, shards: int) -> list[str]:
    return [sys.executable, "manage.py", "record_groups", "--shard", f"{shard}/{shards}"]


@dataclass
class ShardProcess:
    shard: int
    process: subprocess.Popen
    started: float = field(default_factory=time.monotonic)


class RecorderProcesses:
    def __init__(self, shards: int, *, command: Callable[[int, int], list[str]] = shard_command,
                 backoff_s: tuple[float, ...] = RESTART_BACKOFF_S) -> None:
        self.shards, self.command, self.backoff_s = shards, command, backoff_s
        self.children: dict[int, ShardProcess] = {}
        self.failures: dict[int, int] = {}
        self.not_before: dict[int, float] = {}

    def reconcile(self) -> None:
        for shard, child in list(self.children.items()):
            if (code := child.process.poll()) is not None:
                del self.children[shard]
                self._died(child, code)
        now = time.monotonic()
        for shard in range(self.shards):
            if shard not in self.children and now >= self.not_before.get(shard, 0.0):
                process = subprocess.Popen(self.command(shard, self.shards), cwd=PROJECT_DIR)
                self.children[shard] = ShardProcess(shard, process)
                log.info("Recorder process %s/%s started (process %s)", shard, self.shards, process.pid)

    def _died(self, child: ShardProcess, code: int) -> None:
        lived = time.monotonic() - child.started
        failures = 0 if lived > HEALTHY_AFTER_S else self.failures.get(child.shard, 0) + 1
        self.failures[child.shard] = failures
        delay = self.backoff_s[min(failures, len(self.backoff_s) - 1)]
        self.not_before[child.shard] = time.monotonic() + delay
        message = MSG_PROCESS_DIED.format(how=_describe_exit(code), delay=delay)
        log.warning("Recorder process %s/%s: %s", child.shard, self.shards, message)
        for name in Cluster.objects.values_list("name", flat=True):
            if shard_of(name, self.shards) == child.shard:
                recorder_status_note(name, RecorderStatus.WAITING, detail=message)

    def stop_all(self) -> None:
        for child in self.children.values():
            if child.process.poll() is None:
                child.process.terminate()
        deadline = time.monotonic() + PROCESS_STOP_GRACE_S
        for child in self.children.values():
            try:
                child.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
        self.children.clear()

    def run(self, *, should_stop: Callable[[], bool]) -> None:
        try:
            while not should_stop():
                self.reconcile()
                deadline = time.monotonic() + RECONCILE_EVERY_S
                while time.monotonic() < deadline and not should_stop():
                    time.sleep(0.2)
        finally:
            self.stop_all()
