"""One Kafka client process per cluster connection on this host, so no cluster can take down the processes that
serve them all, and 8 web workers do not hold 8 copies of each cluster's clients.

librdkafka can abort the whole process on an internal assertion (see the README's notes on Kafka clients): no
Python `except` catches that. Each cluster's clients therefore live in a client process of their own
(gateway.kafka.sandbox.child), shared by every web and Celery process of the host over a Unix socket
(gateway.kafka.sandbox.sockets): the first process that needs it starts it, detached, and the others connect. The
caller's thread sends a request and waits, bounded. When the client process dies, its callers in every process
get ClusterUnavailable at once and the next call starts a fresh one. It is replaced too when one operation keeps
failing (see claim_recycle), so clients held across a broker restart, a changed address or a renewed certificate
cannot keep a cluster's pages down; and it stops itself when no process used it for IDLE_AFTER_S.

The background lane (the lag sweep, the shared tables' rebuilds: ClusterConnection.lane) has librdkafka clients of
its own in the cluster's client process, so a page's small request never queues behind a sweep's big one on a
broker connection; its answers are pickled frame by frame (gateway.kafka.sandbox.wire), so they do not hold the
GIL for their whole length either. KAFKA_BACKGROUND_CLIENT_PROCESS gives the lane a second client process per
cluster instead, for ~40 MiB more per cluster.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from itertools import count
from pathlib import Path

from gateway.kafka.errors import ClusterUnavailable
from gateway.kafka.java import host_jvm
from gateway.kafka.java.bridge import WARMUP_S, bridge_stop
import gateway.kafka.sandbox.sockets as sockets
from gateway.kafka.sandbox.wire import FORGET, IDLE_NOTICE, STOP, read_messages, send_message
from gateway.kafka.types import ClusterConnection

log = logging.getLogger(__name__)

CHILD_MODULE = "gateway.kafka.sandbox.child"

RECYCLE_AFTER_S = 10.0  # an operation failing this long on a cluster gets it a fresh client process
STUCK_AFTER_S = 3.0  # ... or this long while other operations on the same cluster succeed
MAX_RECYCLE_WAIT_S = 120.0  # a cluster that stays down is given fresh clients ever more rarely, up to this
# Per cluster and operation: replacements since that operation last succeeded (each one doubles the next wait,
# so a cluster that stays down, or one group whose coordinator is down, does not cost a new process every time).
_fruitless_recycles: dict[tuple[str, str], int] = {}
IDLE_AFTER_S = 600.0  # a client process no process of the host sent a request for this long stops itself
STOP_WAIT_S = 5.0  # stop_host_processes: a client process still there after this is killed
# A call not answered within this many of its bounds (and 2 s) means its client process is stuck: a call must make
# no more round trips in a row than that (big ones are split by their callers, e.g. offsets/lag/observe.py).
SILENT_AFTER_BOUNDS = 3

MSG_CHILD_DIED = ("The Kafka client process for cluster '{cluster}' stopped ({how}) during this request; "
                  "a new one starts with the next request.")
MSG_CHILD_SILENT = "Cluster '{cluster}' did not answer within {timeout:g} s (its client process was restarted)."


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _how_it_ended(pid: int, wait_s: float = 0.0) -> str:
    """The client process is no child of ours (it outlives its starter), so its exit status is not ours to read;
    its socket closes a moment before the process is gone."""
    deadline = time.monotonic() + wait_s
    while not _pid_gone(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return f"process {pid} is gone" if _pid_gone(pid) else f"the connection to process {pid} closed"


def _settings_key(connection: ClusterConnection) -> tuple:
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


def _connection_key(connection: ClusterConnection, settings_key: tuple | None = None) -> tuple:
    """Which client process serves the connection: its settings and its lane's process."""
    return (*(settings_key or _settings_key(connection)), _process_lane(connection))


def _process_lane(connection: ClusterConnection) -> str:
    """Which of the cluster's client processes serves this connection's lane."""
    from django.conf import settings

    return connection.lane if getattr(settings, "KAFKA_BACKGROUND_CLIENT_PROCESS", False) else ""


class _StoppedIdle(Exception):
    """The client process stopped idle before it took this request: the request may go to a fresh one."""


class ClientProcess:
    """This process's link to the host's client process of one connection (started by whichever process of the
    host needed it first, and shared by all of them); thread-safe; answers are matched by request id."""

    def __init__(self, connection: ClusterConnection, key: tuple) -> None:
        self.connection = connection
        self.key = key  # as it was when the process's clients were made
        link = sockets.connect_or_start(connection, key, idle_s=IDLE_AFTER_S)
        self.sock, self.pid = link.sock, link.pid
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
        self._stopped_idle = False
        self._how: str | None = None  # how the process ended, once its socket closed
        threading.Thread(target=self._read_answers, name=f"kafka-sandbox-{connection.name}", daemon=True).start()

    @property
    def alive(self) -> bool:
        return not self._closed

    def call(self, method: str, args: tuple, kwargs: dict, *, timeout: float, backoff: float, wait_s: float,
             lane: str = ""):
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise _StoppedIdle() if self._stopped_idle else self._died_error()
            request_id = next(self._ids)
            self._pending[request_id] = future
        self.last_used = time.monotonic()
        try:
            send_message(self.sock, self._send_lock, (request_id, method, args, kwargs, timeout, backoff, lane))
        except OSError:
            self._fail_pending()
        try:
            return future.result(timeout=wait_s)
        except FutureTimeout:
            # The client process bounds every call itself, so silence means it is stuck: replace it.
            log.warning("Kafka client process %s for cluster '%s' did not answer within %.0f s; stopping it",
                        self.pid, self.connection.name, wait_s)
            self.close(kill=True)
            raise ClusterUnavailable(MSG_CHILD_SILENT.format(cluster=self.connection.name, timeout=wait_s),
                                     code="_TIMED_OUT", cluster=self.connection.name) from None
        finally:
            with self._lock:
                self._pending.pop(request_id, None)

    def _read_answers(self) -> None:
        stream = self.sock.makefile("rb")
        for answer in read_messages(stream):
            request_id, ok, value = answer
            if request_id == IDLE_NOTICE:
                self._stopped_idle = True
                break
            with self._lock:
                future = self._pending.get(request_id)
            if future is not None and not future.done():
                future.set_result(value) if ok else future.set_exception(value)
        if not self._closed and not self._stopped_idle:
            self._how = _how_it_ended(self.pid, wait_s=0.5)
            log.warning("Kafka client process %s for cluster '%s' stopped (%s); the next request starts a new one",
                        self.pid, self.connection.name, self._how)
        self._fail_pending()
        try:
            self.sock.close()
        except OSError:
            pass

    def _died_error(self) -> ClusterUnavailable:
        how = self._how or _how_it_ended(self.pid)
        return ClusterUnavailable(MSG_CHILD_DIED.format(cluster=self.connection.name, how=how),
                                  code="_TRANSPORT", cluster=self.connection.name)

    def _fail_pending(self) -> None:
        with self._lock:
            self._closed = True
            pending, self._pending = list(self._pending.values()), {}
        for future in pending:
            if not future.done():
                future.set_exception(_StoppedIdle() if self._stopped_idle else self._died_error())

    def close(self, *, kill: bool = False, retire: bool = False) -> None:
        """Drops this process's link; `retire` also stops the client process (for every process of the host:
        its clients are stale), `kill` kills it (it stopped answering)."""
        with self._lock:
            self._closed = True
        try:
            if kill:
                os.kill(self.pid, signal.SIGKILL)
            elif retire:
                send_message(self.sock, self._send_lock, (0, STOP, (), {}, 0.0, 0.0))
        except OSError:
            pass
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
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


# By (cluster, process lane); the lane is part of the key too, so each lane's process has a socket of its own.
_children: dict[tuple[str, str], ClientProcess] = {}
_children_lock = threading.Lock()
_starting: dict[tuple[str, str], threading.Lock] = {}  # one thread of this process connects or starts at a time


def _child_for(connection: ClusterConnection, settings_key: tuple | None = None) -> ClientProcess:
    """This process's link for this connection's lane; a cluster whose settings changed gets a new client process,
    the old one retired (its clients are stale for every process of the host)."""
    key = _connection_key(connection, settings_key)
    lane = _process_lane(connection)
    with _children_lock:
        child = _children.get((connection.name, lane))
        if child is not None and child.alive and child.key == key:
            return child
        starting = _starting.setdefault((connection.name, lane), threading.Lock())
    with starting:  # not under _children_lock: starting a process must not hold up other clusters' calls
        with _children_lock:
            child = _children.get((connection.name, lane))
            if child is not None and child.alive and child.key == key:
                return child
        if child is not None:
            child.close(retire=child.key != key)
        fresh = ClientProcess(replace(connection, lane=lane), key)  # each request still names its own lane
        with _children_lock:
            _children[(connection.name, lane)] = fresh
        return fresh


# Operations served by Kafka's Java Admin client (gateway.kafka.java.bridge), and what launching its JVM may take on
# a busy machine.
JAVA_OPERATIONS = frozenset({
    "list_transactions", "describe_transactions", "describe_producers", "abort_transaction",
    "describe_client_quotas", "alter_client_quotas", "list_reassignments", "alter_reassignments", "describe_quorum",
    "describe_registered_brokers", "describe_log_dirs", "describe_log_dir_states", "list_groups_of_every_type",
    "describe_share_groups",
    "share_group_offsets", "alter_share_group_offsets", "delete_share_group_offsets", "delete_share_groups",
    "describe_streams_groups", "streams_group_offsets", "alter_streams_group_offsets", "delete_streams_group_offsets",
    "delete_streams_groups", "group_offsets_batched", "read_jmx", "topic_ids", "describe_group_protocols",
    "read_client_software", "finalized_features",
})
JVM_START_S = 5.0


def call(connection: ClusterConnection, method: str, args: tuple, kwargs: dict, *, timeout: float,
         backoff: float):
    """Runs KafkaAdmin.<method>(*args, **kwargs) in the cluster's client process. A call makes at most a few
    bounded round trips, so the wait is bounded by a few request timeouts."""
    wait_s = SILENT_AFTER_BOUNDS * timeout + 2
    if method in JAVA_OPERATIONS:
        wait_s += JVM_START_S + WARMUP_S  # the process's first Java call starts a JVM and warms its client up
    # A cluster a client process just found down fails here at once, whichever lane's process found it: a page
    # whose calls take both lanes waits once, as it did when one process served both.
    settings_key = _settings_key(connection)
    _check_not_known_down(connection, settings_key)
    child = _child_for(connection, settings_key)
    try:
        try:
            result = child.call(method, args, kwargs, timeout=timeout, backoff=backoff, wait_s=wait_s,
                                lane=connection.lane)
        except _StoppedIdle:  # it never took the request: a fresh process does, once
            child = _child_for(connection, settings_key)
            result = child.call(method, args, kwargs, timeout=timeout, backoff=backoff, wait_s=wait_s,
                                lane=connection.lane)
    except _StoppedIdle:
        raise child._died_error() from None
    except ClusterUnavailable as exc:
        down_for = getattr(exc, "down_for_s", 0.0)
        if down_for:
            now = time.monotonic()
            for key in [k for k, (until, _) in _known_down.items() if until < now]:
                _known_down.pop(key, None)
            _known_down[settings_key] = (now + down_for, exc.message)
        child.note_outcome(method, failed_unreachable=True)
        failing_for = child.claim_recycle(method)
        if failing_for is not None:
            log.warning("Cluster '%s' has failed %s for %.0f s: replacing its Kafka client process",
                        connection.name, method, failing_for)
            with _children_lock:
                if _children.get((connection.name, _process_lane(connection))) is child:
                    del _children[(connection.name, _process_lane(connection))]
            child.close(retire=True)
        raise
    child.note_outcome(method, failed_unreachable=False)
    _known_down.pop(settings_key, None)
    return result


# Clusters one of their client processes just found down, by connection settings (new settings or renewed
# certificate files: a new start).
_known_down: dict[tuple, tuple[float, str]] = {}


def _check_not_known_down(connection: ClusterConnection, settings_key: tuple) -> None:
    entry = _known_down.get(settings_key)
    if entry and time.monotonic() < entry[0]:
        raise ClusterUnavailable(entry[1], code="_TRANSPORT", cluster=connection.name)


def forget_all() -> None:
    """Asks every client process this process uses to drop its cached clients and fail-fast marks (tests restart
    brokers), and drops this process's marks."""
    _known_down.clear()
    with _children_lock:
        children = list(_children.values())
    for child in children:
        if child.alive:
            try:
                child.call(FORGET, (), {}, timeout=1.0, backoff=0.0, wait_s=5.0)
            except (ClusterUnavailable, _StoppedIdle):
                pass


def stop_all() -> None:
    """Drops this process's links; the client processes stay for the host's other processes."""
    with _children_lock:
        children = list(_children.values())
        _children.clear()
    for child in children:
        child.close()


def child_pids(lane: str = "") -> dict[str, int]:
    """The process ids of one lane's client processes this process uses, by cluster (for tests and diagnostics)."""
    with _children_lock:
        return {name: child.pid for (name, its_lane), child in _children.items() if child.alive and its_lane == lane}


@dataclass(frozen=True)
class HostClientProcess:
    cluster: str
    lane: str
    pid: int


def host_client_processes() -> list[HostClientProcess]:
    """The client processes of this host's socket folder that still run, whichever process started them (for the
    console's memory report): from the file each writes beside its socket."""
    folder, _, _ = sockets.host_sockets()
    found = []
    for path in sorted(folder.glob(f"*{sockets.INFO_SUFFIX}")):
        try:
            info = json.loads(path.read_text())
            process = HostClientProcess(cluster=str(info["cluster"]), lane=str(info["lane"]), pid=int(info["pid"]))
            command = Path(f"/proc/{process.pid}/cmdline").read_bytes()
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if CHILD_MODULE.encode() in command:  # not a pid reused since
            found.append(process)
    return found


def stop_host_processes() -> list[int]:
    """Stops every client process listening in this host's socket folder, and the host's Java Admin JVM (the test
    session's end, `make run`'s, an operator who changed the socket folder); returns their pids."""
    stop_all()
    folder, token, paths = sockets.host_sockets()
    stopped = []
    # Every process is asked first and then all are waited for together: one after the other, a test session's
    # few dozen processes took a minute to stop.
    for path in paths:
        link = sockets.connect(path, token, cluster=path.stem)
        if link is None:
            path.unlink(missing_ok=True)
            continue
        try:
            send_message(link.sock, threading.Lock(), (0, STOP, (), {}, 0.0, 0.0))
        except OSError:
            pass
        link.sock.close()
        stopped.append(link.pid)
    deadline = time.monotonic() + STOP_WAIT_S
    while any(not _pid_gone(pid) for pid in stopped) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in stopped:
        if not _pid_gone(pid):
            os.kill(pid, signal.SIGKILL)
    for info in folder.glob(f"*{sockets.INFO_SUFFIX}"):  # a killed process's, left behind
        if not info.with_suffix(".sock").exists():
            info.unlink(missing_ok=True)
    jvm = host_jvm.stop(folder)  # the Java Admin bridge serves only them
    bridge_stop()
    return stopped + ([jvm] if jvm is not None else [])


def _after_fork_in_child() -> None:
    """A forked process (a gunicorn worker of a preloading master) has the links' sockets but not their reader
    threads: it makes links of its own."""
    global _children_lock
    _children_lock = threading.Lock()
    _children.clear()
    _starting.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)
