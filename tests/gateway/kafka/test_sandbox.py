"""The host's Kafka client processes on the real broker: separate processes share one per cluster, a peer without
the token is refused unheard, a client process killed mid-call fails every caller at once and the next call
starts a new one, an idle one stops itself, and changed settings get a new one."""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from gateway.kafka.sandbox import client_processes as sandbox
from gateway.kafka.errors import ClusterUnavailable
from gateway.kafka.isolated import IsolatedKafkaAdmin
from gateway.kafka.sandbox import sockets
from gateway.kafka.sandbox.child import TOKEN_DEADLINE_S
from gateway.kafka.sandbox.wire import HEADER, read_message
from gateway.kafka.types import BACKGROUND, ClusterConnection
from console.paths import PROJECT_DIR

pytestmark = pytest.mark.kafka

# Another process of the host: asks one cluster once and prints the client process it used and what it got.
CALLER = """
import json, os, sys, django
django.setup()
from gateway.kafka.sandbox import client_processes as sandbox
from gateway.kafka.isolated import IsolatedKafkaAdmin
from gateway.kafka.types import ClusterConnection
name, bootstrap, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
admin = IsolatedKafkaAdmin(ClusterConnection(name, bootstrap), timeout=timeout)
print("calling", flush=True)
try:
    admin.describe_cluster()
    error = None
except Exception as exc:
    error = [type(exc).__name__, str(exc)]
link = sandbox._children.get((name, ""))  # kept after it died, to say which process it was
print(json.dumps({"pid": link.pid if link else None, "error": error}), flush=True)
"""


def _caller(name: str, bootstrap: str, timeout: float = 5.0) -> subprocess.Popen:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", "DJANGO_DEBUG": "1",
           "PYTHONPATH": str(PROJECT_DIR)}
    return subprocess.Popen([sys.executable, "-c", CALLER, name, bootstrap, str(timeout)], cwd=PROJECT_DIR,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _outcome(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])


def _socket_of(connection: ClusterConnection) -> tuple[Path, bytes]:
    folder, token, _ = sockets.host_sockets()
    name = sockets.socket_name(token, sandbox._connection_key(connection))
    return folder / f"{name}.sock", token


def _wait_gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if sandbox._pid_gone(pid):
            return True
        time.sleep(0.05)
    return False


def test_separate_processes_asking_one_cluster_share_one_client_process(kafka_node):
    name = f"shared-{uuid.uuid4().hex[:8]}"
    callers = [_caller(name, kafka_node.bootstrap) for _ in range(2)]  # racing to start it
    outcomes = [_outcome(caller) for caller in callers]
    IsolatedKafkaAdmin(ClusterConnection(name, kafka_node.bootstrap), timeout=5.0).describe_cluster()

    assert [o["error"] for o in outcomes] == [None, None]
    pid = sandbox.child_pids()[name]
    assert [o["pid"] for o in outcomes] == [pid, pid]
    assert not sandbox._pid_gone(pid)  # it outlived the processes that asked first
    # Detached: no child of this process or of the callers (it is in a session of its own).
    assert os.getsid(pid) == pid


def _connections_to(pid: int, port: int) -> int:
    """Established TCP connections of process `pid` to `port` (from /proc: its socket inodes, the kernel's table)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "01" and int(fields[2].rsplit(":", 1)[1], 16) == port and fields[9] in inodes:
                found += 1
    return found


def test_the_background_lane_has_a_client_process_of_its_own_when_so_configured(kafka_node, settings):
    """With KAFKA_BACKGROUND_CLIENT_PROCESS, a sweep's big requests and a page's small ones share neither a broker
    connection nor a process: the background lane's calls go to a second client process of the cluster, shared by
    the host's processes like the first."""
    settings.KAFKA_BACKGROUND_CLIENT_PROCESS = True
    name = f"lanes-{uuid.uuid4().hex[:8]}"
    port = int(kafka_node.bootstrap.rsplit(":", 1)[1])
    page = IsolatedKafkaAdmin(ClusterConnection(name, kafka_node.bootstrap), timeout=5.0)
    page.describe_cluster()
    pid = sandbox.child_pids()[name]
    by_pages = _connections_to(pid, port)
    background = IsolatedKafkaAdmin(ClusterConnection(name, kafka_node.bootstrap, lane=BACKGROUND), timeout=5.0)
    assert background.describe_cluster().brokers
    background_pid = sandbox.child_pids(BACKGROUND)[name]
    assert background_pid != pid and sandbox.child_pids()[name] == pid
    assert by_pages >= 1 and _connections_to(pid, port) == by_pages  # nothing of the background lane's in the first
    assert _connections_to(background_pid, port) >= 1
    # Killed, the background process takes its lane's calls with it, and only them; the next one starts another.
    os.kill(background_pid, signal.SIGKILL)
    assert page.describe_cluster().brokers and sandbox.child_pids()[name] == pid
    with pytest.raises(ClusterUnavailable):
        background.describe_cluster()
    assert background.describe_cluster().brokers
    assert sandbox.child_pids(BACKGROUND)[name] not in (pid, background_pid)


def test_both_lanes_share_one_client_process_by_default(kafka_node):
    """One client process per cluster (each added one costs a process), but a broker answers one request of a
    connection at a time: the background lane has librdkafka clients, and so connections, of its own in it."""
    name = f"onelane-{uuid.uuid4().hex[:8]}"
    port = int(kafka_node.bootstrap.rsplit(":", 1)[1])
    page = IsolatedKafkaAdmin(ClusterConnection(name, kafka_node.bootstrap), timeout=5.0)
    page.describe_cluster()
    pid = sandbox.child_pids()[name]
    by_pages = _connections_to(pid, port)
    background = IsolatedKafkaAdmin(ClusterConnection(name, kafka_node.bootstrap, lane=BACKGROUND), timeout=5.0)
    assert background.describe_cluster().brokers
    assert sandbox.child_pids()[name] == pid and name not in sandbox.child_pids(BACKGROUND)
    assert _connections_to(pid, port) > by_pages  # the background lane's own admin client connected


def test_a_peer_without_the_token_is_closed_unheard(kafka_node, tmp_path):
    connection = ClusterConnection(f"token-{uuid.uuid4().hex[:8]}", kafka_node.bootstrap)
    admin = IsolatedKafkaAdmin(connection, timeout=5.0)
    admin.describe_cluster()
    pid = sandbox.child_pids()[connection.name]
    path, token = _socket_of(connection)
    assert oct(path.stat().st_mode & 0o777) == oct(0o600) and oct(path.parent.stat().st_mode & 0o777) == oct(0o700)

    # A request instead of the token: were it unpickled, it would create the marker file.
    marker = tmp_path / "unpickled"
    request = pickle.dumps((1, "describe_cluster", (), {}, 1.0, 1.0))
    hostile = pickle.dumps(_Touch(str(marker)))
    for payload in (HEADER.pack(len(request)) + request, HEADER.pack(len(hostile)) + hostile,
                    b"0" * len(token)):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
            peer.settimeout(10)
            peer.connect(str(path))
            peer.sendall(payload.ljust(len(token), b"\0"))
            assert _closed_unheard(peer)
    assert not marker.exists()

    # Silence: dropped once the deadline for the token passes.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
        peer.settimeout(TOKEN_DEADLINE_S + 5)
        peer.connect(str(path))
        started = time.monotonic()
        assert _closed_unheard(peer)
        assert time.monotonic() - started >= TOKEN_DEADLINE_S - 0.5

    # With the token: the hello, then requests; and the process serving the others never stopped.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
        peer.settimeout(10)
        peer.connect(str(path))
        peer.sendall(token)
        assert read_message(peer.makefile("rb")) == ("hello", pid)
    assert admin.describe_cluster().brokers
    assert sandbox.child_pids()[connection.name] == pid


def _closed_unheard(peer: socket.socket) -> bool:
    """Closed with nothing sent (a reset when the server left our bytes unread)."""
    try:
        return peer.recv(1024) == b""
    except ConnectionResetError:
        return True


class _Touch:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_a_client_process_killed_mid_call_fails_every_caller_and_the_next_call_starts_a_new_one(silent_server):
    # A broker that never answers keeps both calls in flight for their whole timeout (20 s).
    connection = ClusterConnection(f"killed-{uuid.uuid4().hex[:8]}", silent_server)
    admin = IsolatedKafkaAdmin(connection, timeout=20.0)
    here: list[BaseException] = []

    def call_here():
        try:
            admin.describe_cluster()
        except BaseException as exc:  # noqa: BLE001 - the test looks at what it was
            here.append(exc)

    thread = threading.Thread(target=call_here)
    thread.start()
    deadline = time.monotonic() + 30
    while connection.name not in sandbox.child_pids():
        assert time.monotonic() < deadline, "no client process started"
        time.sleep(0.05)
    pid = sandbox.child_pids()[connection.name]
    other = _caller(connection.name, silent_server, timeout=20.0)
    assert other.stdout.readline().strip() == "calling"
    time.sleep(2)  # its request reached the client process

    killed = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    thread.join(10)
    outcome = _outcome(other)
    assert time.monotonic() - killed < 10  # at once, not after the calls' 20 s

    died = sandbox.MSG_CHILD_DIED.split("{how}")[0].format(cluster=connection.name)
    assert len(here) == 1 and isinstance(here[0], ClusterUnavailable) and str(here[0]).startswith(died)
    assert outcome["pid"] == pid
    assert outcome["error"][0] == "ClusterUnavailable" and outcome["error"][1].startswith(died)

    with pytest.raises(ClusterUnavailable, match="did not answer"):
        IsolatedKafkaAdmin(connection, timeout=1.0).describe_cluster()
    fresh = sandbox.child_pids()[connection.name]
    assert fresh != pid and not sandbox._pid_gone(fresh)


def test_an_idle_client_process_stops_itself_and_the_next_call_starts_a_fresh_one(kafka_node, monkeypatch):
    monkeypatch.setattr(sandbox, "IDLE_AFTER_S", 1.0)
    connection = ClusterConnection(f"idle-{uuid.uuid4().hex[:8]}", kafka_node.bootstrap)
    admin = IsolatedKafkaAdmin(connection, timeout=5.0)
    admin.describe_cluster()
    pid = sandbox.child_pids()[connection.name]
    path, _ = _socket_of(connection)
    assert path.exists()

    assert _wait_gone(pid, 15), "the idle client process did not stop"
    assert not path.exists()
    assert admin.describe_cluster().brokers  # no error: the link noticed the stop and makes a new one
    assert sandbox.child_pids()[connection.name] != pid


def test_changed_settings_get_a_new_client_process_and_retire_the_old_one(kafka_node):
    name = f"changed-{uuid.uuid4().hex[:8]}"
    IsolatedKafkaAdmin(ClusterConnection(name, kafka_node.bootstrap), timeout=5.0).describe_cluster()
    before = sandbox.child_pids()[name]

    changed = ClusterConnection(name, kafka_node.bootstrap, config={"client.id": "console-changed"})
    assert IsolatedKafkaAdmin(changed, timeout=5.0).describe_cluster().brokers
    assert sandbox.child_pids()[name] != before
    assert _wait_gone(before, 10), "the client process with the old settings was not retired"
