"""The console's files are its own (console/private_files.py, devstack/private_data.py): a data folder left
open by an older checkout is tightened with a line saying so, and a `make run`-like start through the dev stack's own
scripts, from a shell whose umask lets everyone read (022), leaves nothing under .data that another user of the host
could read: the SQLite database (sessions, password hashes), Kafka's segments and logs, the registry's database, the
status files; and the broker's JMX answers only the password `make` wrote."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from devstack.kafka_jmx import DEV_JMX_PASSWORD_ENV, DEV_JMX_PORT_OFFSET, DEV_JMX_USER
from devstack.launcher import free_port_with, free_ports
from console.paths import PROJECT_DIR
from console.private_files import MSG_TIGHTENED


def _open_to_others(root: Path) -> list[str]:
    return [f"{path} {path.lstat().st_mode & 0o777:04o}" for path in [root, *root.rglob("*")]
            if not path.is_symlink() and path.lstat().st_mode & 0o077]


def _as_a_loose_shell(command: str, **kwargs) -> subprocess.CompletedProcess:
    """`command` from a shell with umask 022, as a developer's terminal has."""
    return subprocess.run(["sh", "-c", f"umask 022; {command}"], cwd=PROJECT_DIR, capture_output=True, text=True,
                          timeout=120, **kwargs)


def test_an_old_data_folder_is_tightened_at_start_with_a_line_saying_so(tmp_path):
    data, outside = tmp_path / ".data", tmp_path / "not-ours.txt"
    _as_a_loose_shell(f"mkdir -p {data}/kafka/data && echo s > {data}/console.sqlite3 && "
                      f"echo x > {data}/kafka/data/00000000000000000000.log && echo o > {outside} && "
                      f"ln -s {outside} {data}/link")
    assert _open_to_others(data)  # 0755 folders, 0644 files: what an older checkout left

    first = _as_a_loose_shell(f"{sys.executable} -m devstack.private_data {data}")
    again = _as_a_loose_shell(f"{sys.executable} -m devstack.private_data {data}")

    assert first.stdout.strip() == MSG_TIGHTENED.format(path=data, mode=0o755, count=4), first.stdout + first.stderr
    assert _open_to_others(data) == [] and data.stat().st_mode & 0o777 == 0o700
    assert again.stdout == ""  # nothing open, nothing said
    assert outside.stat().st_mode & 0o777 == 0o644  # a link's target is not the console's to change


def _kafka_port() -> int:
    """A port with the next one free, and the one DEV_JMX_PORT_OFFSET above it (never 9092..9097: a `make run`,
    which is far above the span these come from)."""
    return free_port_with((1, DEV_JMX_PORT_OFFSET))


def _tails(logs: list[Path], lines: int = 40) -> str:
    """What the started processes printed last: a wait that fails says why (a port taken, a JVM refused, ...)."""
    return "\n".join(f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
                     for log in logs if log.exists())


def _wait(check, what: str, processes: list[subprocess.Popen], logs: list[Path], timeout: float = 150.0):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert all(p.poll() is None for p in processes), f"a process exited while waiting for {what}\n{_tails(logs)}"
        assert time.monotonic() < deadline, f"{what} within {timeout:.0f} s\n{_tails(logs)}"
        time.sleep(1)


@pytest.mark.slow
@pytest.mark.kafka
def test_a_make_run_start_from_a_loose_shell_keeps_every_file_private(tmp_path):
    from devstack.schema_registry import SchemaRegistry
    from devstack.registry_tls import RegistryTls
    from gateway.kafka.admin import KafkaAdmin
    from gateway.kafka.errors import KafkaGatewayError
    from gateway.kafka.types import JMX_CREDENTIALS, ClusterConnection, JmxEndpoint

    data, port, registry_port = tmp_path / ".data", _kafka_port(), free_ports(1)[0]
    password = "jmx-" + os.urandom(8).hex()
    env = {**os.environ, "PROCESS_STATUS_DIR": str(data / "processes"), DEV_JMX_PASSWORD_ENV: password,
           "KAFKA_HEAP": "256m", "DATABASE_URL": f"sqlite:///{data / 'console.sqlite3'}", "DJANGO_ENV_FILE": "",
           "KAFKA_BOOTSTRAP_SERVERS": f"127.0.0.1:{port}", "BROKER_METRICS_LOCAL_JMX": ""}
    python = sys.executable
    logs = [tmp_path / "kafka.out", tmp_path / "registry.out"]
    # As the Makefile's `migrate` and the Procfile run them, each from a shell with umask 022.
    assert _as_a_loose_shell(f"{python} -m devstack.private_data {data}", env=env).returncode == 0
    migrated = _as_a_loose_shell(f"{python} manage.py migrate --noinput", env=env)
    assert migrated.returncode == 0, migrated.stderr[-2000:]
    started = [subprocess.Popen(["sh", "-c", f"umask 022; exec {python} -m devstack.keep_running {name} -- "
                                 f"{python} -m {command}"], cwd=PROJECT_DIR, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
               for name, command, log in (
                   ("kafka", f"devstack.kafka run --home {data / 'kafka'} --port {port} "
                             f"--controller-port {port + 1}", open(logs[0], "w")),
                   ("registry", f"devstack.schema_registry --port {registry_port} --home {data / 'registry'} "
                                f"--tls-dir {data / 'certs' / 'registry'}", open(logs[1], "w")))]
    try:
        admin = KafkaAdmin(ClusterConnection("loose", f"127.0.0.1:{port}"), timeout=5.0, unreachable_backoff=0.0)

        def answers():
            try:
                return admin.describe_cluster().brokers
            except KafkaGatewayError:
                return None

        _wait(answers, "the broker to answer", started, logs)
        admin.create_topic("private-segments", partitions=1, replication_factor=1, configs={})
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}"})
        for i in range(50):
            producer.produce("private-segments", value=f"record {i}".encode())
        assert producer.flush(30) == 0
        del producer
        registry = SchemaRegistry(home=data / "registry", port=registry_port,
                                  tls=RegistryTls(data / "certs" / "registry"))
        _wait(lambda: registry.tls.ca.exists() and registry.ready(), "the registry to answer", started, logs)
        assert not registry.ready(certificate=False)

        jmx = JmxEndpoint(1, "127.0.0.1", port + DEV_JMX_PORT_OFFSET)
        right = JmxEndpoint(1, jmx.host, jmx.port, username=DEV_JMX_USER, password=password)
        anonymous, with_password = admin.read_jmx([jmx, right], timeout=15)
        assert anonymous.error_kind == JMX_CREDENTIALS and not anonymous.gauges
        assert with_password.ok and with_password.gauges["active_controllers"] == 1, with_password.error

        stored = {p.relative_to(data).parts[0] for p in data.rglob("*") if p.is_file()}
        assert {"console.sqlite3", "kafka", "registry", "certs", "processes"} <= stored, stored
        assert list((data / "kafka" / "data").glob("private-segments-0/*.log"))
        assert (data / "registry" / "registry.log").stat().st_size > 0
        assert _open_to_others(data) == []
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in started:
            try:
                process.wait(40)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
