"""One child process per cluster connection, so no cluster can take down the process that serves them all.

librdkafka can abort the whole process on an internal assertion (see the README's notes on Kafka clients): no
Python `except` catches that. Each cluster's clients therefore live in a child (console.kafka.sandbox_child);
the caller's thread sends a request and waits, bounded. When a child dies, its callers get ClusterUnavailable
at once and the next call starts a fresh child. A child is replaced too when one operation keeps failing (see
claim_recycle), so clients held across a broker restart, a changed address or a renewed certificate cannot keep
a cluster's pages down.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from itertools import count
from pathlib import Path

from console.kafka.errors import ClusterUnavailable
from console.kafka.java_admin import WARMUP_S
from console.kafka.sandbox_child import FORGET, read_message, write_message
from console.kafka.types import ClusterConnection

log = logging.getLogger(__name__)

RECYCLE_AFTER_S = 10.0  # an operation failing this long on a cluster gets it a fresh client process
STUCK_AFTER_S = 3.0  # ... or this long while other operations on the same cluster succeed
MAX_RECYCLE_WAIT_S = 120.0  # a cluster that stays down is given fresh clients ever more rarely, up to this
# Per cluster and operation: replacements since that operation last succeeded (each one doubles the next wait,
# so a cluster that stays down, or one group whose coordinator is down, does not cost a new process every time).
_fruitless_recycles: dict[tuple[str, str], int] = {}
IDLE_AFTER_S = 600.0  # a child unused this long is stopped
_PROJECT_DIR = Path(__file__).resolve().parents[2]

MSG_CHILD_DIED = ("The Kafka client process for cluster '{cluster}' stopped ({how}) during this request; "
                  "a new one starts with the next request.")
MSG_CHILD_SILENT = "Cluster '{cluster}' did not answer within {timeout:g} s (its client process was restarted)."


def _exit_description(returncode: int | None) -> str:
    if returncode is None:
        return "pipe closed"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def _connection_key(connection: ClusterConnection) -> tuple:
    """Changes when the settings change, and when a certificate or key file they name is replaced (renewed):
    librdkafka reads those files once, when a client is made."""
    files = []
    for key, value in sorted(connection.config.items()):
        if key.endswith(".location"):
            try:
                stat = os.stat(value)
                files.append((key, stat.st_mtime_ns, stat.st_size))
            except OSError:
                files.append((key, None, None))
    return (connection.name, connection.bootstrap_servers, tuple(sorted(connection.config.items())), tuple(files),
            connection.registry_url, tuple(sorted(connection.registry_config.items())))


class ClientProcess:
    """A child holding one cluster connection's clients; thread-safe; answers are matched by request id."""

    def __init__(self, connection: ClusterConnection) -> None:
        self.connection = connection
        self.key = _connection_key(connection)  # as it was when this child's clients were made
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_PROJECT_DIR), os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "console.kafka.sandbox_child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            cwd=_PROJECT_DIR, env=env, start_new_session=True,
        )
        self.started = self.last_used = time.monotonic()
        # Per operation: after a restart librdkafka may answer Metadata while group calls stay stuck for good, so
        # one success elsewhere must not hide an operation that keeps failing.
        self.failing_since: dict[str, float] = {}
        self.last_success: float | None = None
        self.recycling = False
        self._ids = count(1)
        self._pending: dict[int, Future] = {}
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._closed = False
        write_message(self.process.stdin, self._send_lock, connection)
        threading.Thread(target=self._read_answers, name=f"kafka-sandbox-{connection.name}", daemon=True).start()

    @property
    def alive(self) -> bool:
        return not self._closed and self.process.poll() is None

    def call(self, method: str, args: tuple, kwargs: dict, *, timeout: float, backoff: float, wait_s: float):
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise self._died_error()
            request_id = next(self._ids)
            self._pending[request_id] = future
        self.last_used = time.monotonic()
        try:
            write_message(self.process.stdin, self._send_lock, (request_id, method, args, kwargs, timeout, backoff))
        except (BrokenPipeError, OSError, ValueError):
            self._fail_pending()
        try:
            return future.result(timeout=wait_s)
        except FutureTimeout:
            # The child bounds every call itself, so silence means it is stuck: replace it.
            log.warning("Kafka client process %s for cluster '%s' did not answer within %.0f s; stopping it",
                        self.process.pid, self.connection.name, wait_s)
            self.close(kill=True)
            raise ClusterUnavailable(MSG_CHILD_SILENT.format(cluster=self.connection.name, timeout=wait_s),
                                     code="_TIMED_OUT", cluster=self.connection.name) from None
        finally:
            with self._lock:
                self._pending.pop(request_id, None)

    def _read_answers(self) -> None:
        stdout = self.process.stdout
        while True:
            try:
                answer = read_message(stdout)
            except Exception:  # a torn message from a dying child
                answer = None
            if answer is None:
                break
            request_id, ok, value = answer
            with self._lock:
                future = self._pending.get(request_id)
            if future is not None and not future.done():
                future.set_result(value) if ok else future.set_exception(value)
        returncode = self.process.wait()
        if not self._closed:
            log.warning("Kafka client process %s for cluster '%s' stopped (%s); the next request starts a new one",
                        self.process.pid, self.connection.name, _exit_description(returncode))
        self._fail_pending()

    def _died_error(self) -> ClusterUnavailable:
        how = _exit_description(self.process.poll())
        return ClusterUnavailable(MSG_CHILD_DIED.format(cluster=self.connection.name, how=how),
                                  code="_TRANSPORT", cluster=self.connection.name)

    def _fail_pending(self) -> None:
        with self._lock:
            self._closed = True
            pending, self._pending = list(self._pending.values()), {}
        for future in pending:
            if not future.done():
                future.set_exception(self._died_error())

    def close(self, *, kill: bool = False) -> None:
        with self._lock:
            self._closed = True
        try:
            if kill:
                self.process.kill()
            else:
                self.process.stdin.close()  # the child exits when its input ends
        except OSError:
            pass

    def note_outcome(self, method: str, failed_unreachable: bool) -> None:
        if not failed_unreachable:
            self.failing_since.pop(method, None)
            self.last_success = time.monotonic()
            _fruitless_recycles.pop((self.connection.name, method), None)
        else:
            self.failing_since.setdefault(method, time.monotonic())

    def claim_recycle(self, method: str) -> float | None:
        """How long `method` has failed, when that calls for a fresh child; claimed by one caller only.

        Stuck: the cluster answers other operations since this one began failing (after a broker restart
        librdkafka can keep group calls timed out on an otherwise working client), for STUCK_AFTER_S. Down: the
        operation failed for RECYCLE_AFTER_S. Each wait doubles with every replacement that did not help."""
        now = time.monotonic()
        since = self.failing_since.get(method)
        if since is None:
            return None
        backoff = 2 ** _fruitless_recycles.get((self.connection.name, method), 0)
        failing = now - since
        stuck = (self.last_success is not None and self.last_success > since
                 and failing >= min(MAX_RECYCLE_WAIT_S, STUCK_AFTER_S * backoff))
        down = failing >= min(MAX_RECYCLE_WAIT_S, RECYCLE_AFTER_S * backoff)
        if not (stuck or down):
            return None
        with self._lock:
            if self.recycling:
                return None
            self.recycling = True
        key = (self.connection.name, method)
        _fruitless_recycles[key] = _fruitless_recycles.get(key, 0) + 1
        return failing


_children: dict[str, ClientProcess] = {}
_children_lock = threading.Lock()


def _child_for(connection: ClusterConnection) -> ClientProcess:
    """The live child for this connection; a cluster whose settings changed gets a new one, the old one retired."""
    key = _connection_key(connection)
    retired: list[ClientProcess] = []
    with _children_lock:
        child = _children.get(connection.name)
        if child is not None and (not child.alive or child.key != key):
            retired.append(child)
            child = None
        if child is None:
            child = _children[connection.name] = ClientProcess(connection)
        now = time.monotonic()
        for name, other in list(_children.items()):
            if other is not child and now - other.last_used > IDLE_AFTER_S:
                retired.append(_children.pop(name))
    for old in retired:
        old.close()
    return child


# Operations served by Kafka's Java Admin client (console.kafka.java_admin), and what launching its JVM may take on
# a busy machine.
JAVA_OPERATIONS = frozenset({
    "list_transactions", "describe_transactions", "describe_producers", "abort_transaction",
    "describe_client_quotas", "list_reassignments", "alter_reassignments", "describe_quorum",
    "describe_registered_brokers", "describe_log_dirs", "list_groups_of_every_type", "describe_share_groups",
    "share_group_offsets", "alter_share_group_offsets", "delete_share_group_offsets", "delete_share_groups",
    "describe_streams_groups", "streams_group_offsets", "alter_streams_group_offsets", "delete_streams_group_offsets",
    "delete_streams_groups",
})
JVM_START_S = 5.0


def call(connection: ClusterConnection, method: str, args: tuple, kwargs: dict, *, timeout: float,
         backoff: float):
    """Runs KafkaAdmin.<method>(*args, **kwargs) in the cluster's child. A call makes at most a few bounded
    round trips, so the wait is bounded by a few request timeouts."""
    child = _child_for(connection)
    wait_s = 3 * timeout + 2
    if method in JAVA_OPERATIONS:
        wait_s += JVM_START_S + WARMUP_S  # the child's first Java call starts a JVM and warms its client up
    try:
        result = child.call(method, args, kwargs, timeout=timeout, backoff=backoff, wait_s=wait_s)
    except ClusterUnavailable:
        child.note_outcome(method, failed_unreachable=True)
        failing_for = child.claim_recycle(method)
        if failing_for is not None:
            log.warning("Cluster '%s' has failed %s for %.0f s: replacing its Kafka client process",
                        connection.name, method, failing_for)
            with _children_lock:
                if _children.get(connection.name) is child:
                    del _children[connection.name]
            child.close()
        raise
    child.note_outcome(method, failed_unreachable=False)
    return result


def forget_all() -> None:
    """Asks every child to drop its cached clients and fail-fast marks (tests restart brokers)."""
    with _children_lock:
        children = list(_children.values())
    for child in children:
        if child.alive:
            try:
                child.call(FORGET, (), {}, timeout=1.0, backoff=0.0, wait_s=5.0)
            except ClusterUnavailable:
                pass


def stop_all() -> None:
    with _children_lock:
        children = list(_children.values())
        _children.clear()
    for child in children:
        child.close()


def child_pids() -> dict[str, int]:
    """The live children's process ids by cluster (for tests and diagnostics)."""
    with _children_lock:
        return {name: child.process.pid for name, child in _children.items() if child.alive}
