"""Runs one recorder process per registered cluster and keeps the set in line with the registry.

Each cluster's recorder is a child process (`manage.py record_groups --cluster NAME`), so a native abort in
one cluster's client library stops only that cluster's recording, and the supervisor starts it again. Every
RECONCILE_EVERY_S the registry is read again: a cluster added gets a recorder, one whose connection settings
changed gets a fresh one, one removed has its recorder stopped, all without restarting anything else.
"""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from console.clusters.models import Cluster
from console.paths import PROJECT_DIR
from offsets.models import RecorderStatus

log = logging.getLogger(__name__)
RECONCILE_EVERY_S = 5.0
RESTART_BACKOFF_S = (1.0, 5.0, 15.0, 30.0)
STOP_GRACE_S = 10.0

MSG_DIED = "The recorder process stopped ({how}); it starts again in {delay:g} s."


def settings_fingerprint(cluster: Cluster) -> str:
    """Changes whenever anything the recorder connects with changes."""
    material = json.dumps([cluster.bootstrap_servers, cluster.client_config, cluster.secret_env], sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()


@dataclass
class RecorderChild:
    cluster: str
    fingerprint: str
    process: subprocess.Popen
    started: float = field(default_factory=time.monotonic)


def _describe_exit(code: int) -> str:
    return f"signal {-code}" if code < 0 else f"exit code {code}"


class RecorderSupervisor:
    def __init__(self, *, command: Callable[[str], list[str]] | None = None) -> None:
        self.command = command or (lambda name: [sys.executable, "manage.py", "record_groups", "--cluster", name])
        self.children: dict[str, RecorderChild] = {}
        self.failures: dict[str, int] = {}  # consecutive early deaths, for the backoff
        self.not_before: dict[str, float] = {}

    def reconcile(self) -> None:
        wanted = {c.name: settings_fingerprint(c) for c in Cluster.objects.all()}
        for name, child in list(self.children.items()):
            if name not in wanted:
                log.info("Cluster '%s' was removed: stopping its recorder", name)
                self._stop(child)
                del self.children[name]
            elif child.fingerprint != wanted[name]:
                log.info("Cluster '%s' changed: restarting its recorder with the new settings", name)
                self._stop(child)
                del self.children[name]
            elif (code := child.process.poll()) is not None:
                self._died(child, code)
                del self.children[name]
        now = time.monotonic()
        for name, fingerprint in wanted.items():
            if name not in self.children and now >= self.not_before.get(name, 0.0):
                process = subprocess.Popen(self.command(name), cwd=PROJECT_DIR)
                self.children[name] = RecorderChild(name, fingerprint, process)
                log.info("Recording cluster '%s' (process %s)", name, process.pid)

    def _died(self, child: RecorderChild, code: int) -> None:
        lived = time.monotonic() - child.started
        failures = 0 if lived > 60 else self.failures.get(child.cluster, 0) + 1
        self.failures[child.cluster] = failures
        delay = RESTART_BACKOFF_S[min(failures, len(RESTART_BACKOFF_S) - 1)]
        self.not_before[child.cluster] = time.monotonic() + delay
        message = MSG_DIED.format(how=_describe_exit(code), delay=delay)
        log.warning("Cluster '%s': %s", child.cluster, message)
        RecorderStatus.objects.update_or_create(cluster=child.cluster, defaults={
            "state": RecorderStatus.WAITING, "detail": message, "updated_at": datetime.now(UTC)})

    def _stop(self, child: RecorderChild) -> None:
        if child.process.poll() is None:
            child.process.terminate()
            try:
                child.process.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()

    def stop_all(self) -> None:
        for child in self.children.values():
            if child.process.poll() is None:
                child.process.terminate()
        for child in self.children.values():
            self._stop(child)
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
