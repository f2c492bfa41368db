"""The host's one JVM for the Java Admin client (gateway.kafka.java.host_jvm, driven by gateway.kafka.java.bridge):
processes racing to start it start one, the others find it through a private state file, every process shares one
Admin client per connection, idle clients are closed without touching the others, its heap is the setting's, and
stop_host_processes stops it. Real JVMs, in this session's own client folder; no broker is needed (an Admin client
connects only when asked something), so the clusters here point at a closed port."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from console.paths import PROJECT_DIR
from gateway.kafka.errors import KafkaRequestFailed
from gateway.kafka.java import bridge, host_jvm
from gateway.kafka.types import ClusterConnection

# Another process of the host: drives the JVM (starting it if none runs) and says which one and what it holds.
DRIVER = """
import json, sys, django
django.setup()
from gateway.kafka.java import bridge
from gateway.kafka.types import ClusterConnection
found = bridge._current()
bridge.java_admin(ClusterConnection(sys.argv[1], sys.argv[2]), 3.0)
print(json.dumps({"pid": found.host.pid, "admins": found.admins.size()}), flush=True)
"""


def _drive(name: str, bootstrap: str) -> subprocess.Popen:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", "DJANGO_DEBUG": "1",
           "PYTHONPATH": str(PROJECT_DIR)}
    return subprocess.Popen([sys.executable, "-c", DRIVER, name, bootstrap], cwd=PROJECT_DIR, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _outcome(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=90)
    assert process.returncode == 0, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def no_jvm():
    """No JVM in this session's folder before the test, and none left after it (only the folder's: ours)."""
    bridge.bridge_stop()
    yield
    bridge.bridge_stop()


@pytest.mark.kafka
def test_racing_processes_start_one_jvm_and_share_one_admin_per_connection(no_jvm):
    from devstack.kafka import free_port

    closed = f"127.0.0.1:{free_port()}"
    drivers = [_drive("shared", closed) for _ in range(3)]  # racing to start it
    outcomes = [_outcome(driver) for driver in drivers]
    state = host_jvm.read_state()
    assert state is not None and [o["pid"] for o in outcomes] == [state.pid] * 3
    assert all(o["admins"] == 1 for o in outcomes)  # the first made it, the others found it
    # this process finds the same JVM and the same Admin client; another cluster gets one of its own
    found = bridge._current()
    assert found.host.pid == state.pid
    bridge.java_admin(ClusterConnection("shared", closed), 3.0)
    assert found.admins.size() == 1
    bridge.java_admin(ClusterConnection("other", f"127.0.0.1:{free_port()}"), 3.0)
    assert found.admins.size() == 2
    # detached: it outlived the processes that started it, in a session of its own
    assert os.getsid(state.pid) == state.pid


@pytest.mark.kafka
def test_the_state_file_is_private_and_holds_the_token_py4j_demands(no_jvm):
    from py4j.java_gateway import GatewayParameters, JavaGateway
    from py4j.protocol import Py4JError

    bridge.jvm()
    folder = host_jvm.folder()
    state_file = folder / host_jvm.STATE_FILE
    assert stat.S_IMODE(state_file.stat().st_mode) == 0o600 and stat.S_IMODE(folder.stat().st_mode) == 0o700
    state = json.loads(state_file.read_text())
    assert not (folder / host_jvm.OUTPUT_FILE).exists()  # where it said its token, gone once read
    stranger = JavaGateway(gateway_parameters=GatewayParameters(port=state["port"], read_timeout=5))
    try:
        with pytest.raises(Py4JError):
            stranger.jvm.java.lang.System.getenv("PATH")
    finally:
        stranger.close()


@pytest.mark.kafka
def test_idle_admins_are_closed_and_the_others_kept(no_jvm):
    from devstack.kafka import free_port

    idle = bridge.java_admin(ClusterConnection("idle", f"127.0.0.1:{free_port()}"), 3.0)
    busy = bridge.java_admin(ClusterConnection("busy", f"127.0.0.1:{free_port()}"), 3.0)
    found = bridge._current()
    used = json.loads(str(bridge._jackson().writeValueAsString(found.used)))
    assert len(used) == 2
    idle_key = next(key for key in used if found.admins.get(key).equals(idle))
    busy_key = next(key for key in used if key != idle_key)
    found.used.put(idle_key, 1000)  # last used in 1970: idle for longer than ADMIN_IDLE_S
    bridge._close_idle_admins(found)
    assert found.admins.size() == 1 and found.admins.get(idle_key) is None and idle_key not in bridge._admins
    assert found.admins.get(busy_key).equals(busy)


@pytest.mark.kafka
def test_the_heap_is_the_settings(no_jvm, settings):
    settings.KAFKA_JAVA_BRIDGE_HEAP_MB = 96
    pid = bridge._current().host.pid
    command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert b"-Xmx96m" in command and b"-XX:+ExitOnOutOfMemoryError" in command


@pytest.mark.kafka
def test_stop_host_processes_stops_the_jvm_and_the_next_call_starts_another(no_jvm):
    from gateway.kafka.sandbox import stop_host_processes

    first = bridge._current().host.pid
    assert first in stop_host_processes()
    assert host_jvm.read_state() is None and bridge.bridge_pid() is None
    assert bridge._current().host.pid != first


@pytest.mark.parametrize("value", [0, 63, 16385, "256", True, None])
def test_a_heap_setting_out_of_range_is_refused_before_any_jvm_starts(settings, value):
    settings.KAFKA_JAVA_BRIDGE_HEAP_MB = value
    with pytest.raises(KafkaRequestFailed) as refused:
        host_jvm.heap_mb()
    assert refused.value.message == host_jvm.MSG_BAD_HEAP.format(low=64, high=16384, value=value)


def test_a_state_file_naming_no_jvm_is_not_trusted(tmp_path):
    (tmp_path / host_jvm.STATE_FILE).write_text(json.dumps({"pid": os.getpid(), "port": 1, "token": "x"}))
    assert host_jvm.read_state(tmp_path) is None  # a live pid, but not a py4j JVM
    (tmp_path / host_jvm.STATE_FILE).write_text("not json")
    assert host_jvm.read_state(tmp_path) is None
