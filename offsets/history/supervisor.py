"""Records every registered cluster in one process, a thread per cluster, and keeps the threads in line with the
registry.

A process per cluster cost an interpreter and a Django each (about 185 MiB); a thread costs a consumer and its
buffers (bench/recorder_memory.py). Every RECONCILE_EVERY_S the registry is read again: a cluster added gets a
thread, one whose connection settings changed has its thread stopped and a fresh one started once the old one has
ended, one removed has its thread stopped; the other clusters' threads are left alone. A cluster's thread is never
started while an earlier one of the same cluster still runs, so one cluster's rows have one writer.

An exception ends only the thread it happened in: the cluster's status says so and the thread starts again after
a backoff. A thread that has not looked at its stop flag for `hang_after_s` is reported (its stack goes to the
log) and waited for, not replaced: Python cannot end it, and a second reader would store its records twice.

A native abort in librdkafka ends the process and every thread in it. What runs the command starts it again
(`devstack.keep_running` under `make run`, the container's restart policy under docker-compose), and each cluster
goes on from the read positions it stored with its rows, so nothing is lost or recorded twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import threading
import time
import traceback
import zlib
from collections.abc import Callable

from django.db import connections

from console.clusters.models import Cluster
from console.paths import PROJECT_DIR
from offsets.history import recorder
from offsets.models import RecorderStatus

log = logging.getLogger(__name__)
RECONCILE_EVERY_S = 5.0
RESTART_BACKOFF_S = (1.0, 5.0, 15.0, 30.0)
# A thread that ran this long before failing was working: its next failure starts the backoff over.
HEALTHY_AFTER_S = 60.0
# The recorder looks at its stop flag between polls (0.5 s), batches (well under a second for 50,000 records) and
# sampling rounds; the slowest step, opening the tail of an unreachable cluster, is bounded by a 10 s timeout.
HANG_AFTER_S = 120.0
STOP_WAIT_S = 2.0  # how long a reconcile waits for a stopped thread before going on (the others do not wait)
STOP_GRACE_S = 10.0  # how long stopping the process waits for all threads together

MSG_FAILED = "The recorder stopped ({how}); it starts again in {delay:g} s."
MSG_ENDED = "it ended on its own"
MSG_HUNG = ("The recorder has not moved for {seconds:.0f} s (waiting in {where}); it is started again once that "
            "call returns, or when the recorder process is restarted.")


def shard_of(cluster: str, shards: int) -> int:
    """Which of `shards` recorder processes records the cluster (RECORDER_PROCESSES): the same in every process and
    every run, and unchanged by other clusters coming and going."""
    return zlib.crc32(cluster.encode()) % shards


def settings_fingerprint(cluster: Cluster) -> str:
    """Changes whenever anything the recorder connects with changes."""
    material = json.dumps([cluster.bootstrap_servers, cluster.client_config, cluster.secret_env], sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()


def _how(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return text if len(text) <= 500 else text[:500] + "…"


class RecorderThread:
    """One cluster's recorder: `target(cluster, should_stop=...)` on a daemon thread. Every look at the stop flag
    is also the thread's sign of life."""

    def __init__(self, cluster: str, fingerprint: str, target: Callable[..., None]) -> None:
        self.cluster, self.fingerprint, self.target = cluster, fingerprint, target
        self.stopping = threading.Event()
        self.started = self.beat = time.monotonic()
        self.error: BaseException | None = None
        self.hang_reported = False
        self.thread = threading.Thread(target=self._run, name=f"recorder-{cluster}", daemon=True)

    def should_stop(self) -> bool:
        self.beat = time.monotonic()
        return self.stopping.is_set()

    def _run(self) -> None:
        try:
            self.target(self.cluster, should_stop=self.should_stop)
        except Exception as exc:  # noqa: BLE001 -- any failure is this cluster's alone: reported, then retried
            self.error = exc
            log.exception("Cluster '%s': the recorder failed", self.cluster)
        finally:
            connections.close_all()  # this thread's connections only: Django keeps them per thread

    def where(self) -> str:
        """The innermost frame of the project's own code the thread is in, e.g. `reader.py:179 poll_batch`."""
        frame = sys._current_frames().get(self.thread.ident)
        if frame is None:
            return "an unknown place"
        stack = traceback.extract_stack(frame)
        own = [f for f in stack if f.filename.startswith(str(PROJECT_DIR)) and "/site-packages/" not in f.filename]
        own = own or stack
        last = own[-1]
        return f"{last.filename.rsplit('/', 1)[-1]}:{last.lineno} {last.name}"

    def stack(self) -> str:
        frame = sys._current_frames().get(self.thread.ident)
        return "".join(traceback.format_stack(frame)) if frame is not None else "(no stack)"


class RecorderSupervisor:
    """The clusters of this process: every registered one, or with `shard` (index, count) those shard_of gives it."""

    def __init__(self, *, target: Callable[..., None] | None = None, shard: tuple[int, int] | None = None,
                 backoff_s: tuple[float, ...] = RESTART_BACKOFF_S, hang_after_s: float = HANG_AFTER_S) -> None:
        self.target, self.shard = target or recorder.run, shard
        self.backoff_s, self.hang_after_s = backoff_s, hang_after_s
        self.threads: dict[str, RecorderThread] = {}
        self.failures: dict[str, int] = {}  # consecutive early failures, for the backoff
        self.not_before: dict[str, float] = {}

    def reconcile(self) -> None:
        wanted = {c.name: settings_fingerprint(c) for c in Cluster.objects.all()
                  if self.shard is None or shard_of(c.name, self.shard[1]) == self.shard[0]}
        for name, worker in list(self.threads.items()):
            if not worker.thread.is_alive():
                del self.threads[name]
                if not worker.stopping.is_set():
                    self._failed(worker)
                continue
            if not worker.stopping.is_set():
                if name not in wanted:
                    log.info("Cluster '%s' was removed: stopping its recorder", name)
                    self._stop(worker)
                elif worker.fingerprint != wanted[name]:
                    log.info("Cluster '%s' changed: restarting its recorder with the new settings", name)
                    self._stop(worker)
            if not worker.thread.is_alive():
                del self.threads[name]
            else:
                self._check_hang(worker)
        now = time.monotonic()
        for name, fingerprint in wanted.items():
            if name not in self.threads and now >= self.not_before.get(name, 0.0):
                worker = RecorderThread(name, fingerprint, self.target)
                self.threads[name] = worker
                worker.thread.start()
                log.info("Recording cluster '%s' (thread %s)", name, worker.thread.name)

    def _failed(self, worker: RecorderThread) -> None:
        lived = time.monotonic() - worker.started
        failures = 0 if lived > HEALTHY_AFTER_S else self.failures.get(worker.cluster, 0) + 1
        self.failures[worker.cluster] = failures
        delay = self.backoff_s[min(failures, len(self.backoff_s) - 1)]
        self.not_before[worker.cluster] = time.monotonic() + delay
        how = MSG_ENDED if worker.error is None else _how(worker.error)
        message = MSG_FAILED.format(how=how, delay=delay)
        log.warning("Cluster '%s': %s", worker.cluster, message)
        recorder.recorder_status_note(worker.cluster, RecorderStatus.WAITING, detail=message)

    def _check_hang(self, worker: RecorderThread) -> None:
        silent = time.monotonic() - worker.beat
        if silent < self.hang_after_s:
            worker.hang_reported = False
            return
        if worker.hang_reported:
            return
        worker.hang_reported = True
        message = MSG_HUNG.format(seconds=silent, where=worker.where())
        log.warning("Cluster '%s': %s\n%s", worker.cluster, message, worker.stack())
        recorder.recorder_status_note(worker.cluster, RecorderStatus.WAITING, detail=message)

    def _stop(self, worker: RecorderThread) -> None:
        worker.stopping.set()
        worker.thread.join(STOP_WAIT_S)

    def stop_all(self) -> None:
        for worker in self.threads.values():
            worker.stopping.set()
        deadline = time.monotonic() + STOP_GRACE_S
        for worker in self.threads.values():
            worker.thread.join(max(0.0, deadline - time.monotonic()))
            if worker.thread.is_alive():
                log.warning("Cluster '%s': the recorder did not stop within %g s", worker.cluster, STOP_GRACE_S)
        self.threads.clear()

    def run(self, *, should_stop: Callable[[], bool]) -> None:
        try:
            while not should_stop():
                self.reconcile()
                deadline = time.monotonic() + RECONCILE_EVERY_S
                while time.monotonic() < deadline and not should_stop() and not self._one_failed():
                    time.sleep(0.2)
        finally:
            self.stop_all()

    def _one_failed(self) -> bool:
        """A thread ended unasked: it is reported at once rather than at the next round."""
        return any(not w.thread.is_alive() and not w.stopping.is_set() for w in self.threads.values())
