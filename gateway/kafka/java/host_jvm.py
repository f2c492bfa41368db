"""The host's one JVM for Kafka's Java Admin client: started by whichever process needs it first, found by the others.

Every client process (and, without client isolation, every web or Celery process) of the host drives the same JVM,
py4j's GatewayServer, over loopback. It lives in the client processes' private folder (gateway.kafka.sandbox.sockets,
0700): a lock file, so that of processes racing to start it one does and the others wait for it, and a state file
(0600) with its pid, port and the token py4j made, so the others find it. py4j drops any connection whose first
command does not carry that token: without it, any local process could call System.getenv or Runtime.exec in the
console's name. The JVM holds none of the console's environment; its heap is bounded (KAFKA_JAVA_BRIDGE_HEAP_MB) and
it exits on running out of it, to be started again by the next call rather than limp on.

It runs in a session of its own, so it outlives the process that started it; `manage.py clusters stop-clients`
(gateway.kafka.sandbox.stop_host_processes) stops it with the client processes, and the last client process to stop
idle stops it too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from gateway.kafka.errors import KafkaRequestFailed
from gateway.secret_files import write_secret_file

MSG_NO_LIBS = "Kafka's Java clients are not installed here (no {libs}); run `make deps` or set KAFKA_TOOLS_LIBS."
MSG_JVM_NOT_STARTED = "Kafka's Java client process (JVM) did not start: {detail}"

STATE_FILE = "jvm.state"  # JSON; not named *.json, which are the client processes' (sockets.INFO_SUFFIX)
LOCK_FILE = "jvm.lock"
OUTPUT_FILE = "jvm.out"  # where the JVM says its port and token; removed once read
START_TIMEOUT_S = 30.0  # a JVM that has not said its port and token by then is not going to
STOP_WAIT_S = 5.0
MAIN_CLASS = "py4j.GatewayServer"
# JMX over RMI is Java serialization from whatever answers at a broker's JMX address: a hostile server could send
# a gadget chain built from the classes on this classpath (Kafka's jars and their dependencies). Only the JDK's own
# modules that JMX and RMI need are deserialized; anything else is rejected before it is instantiated. py4j and
# Kafka's Admin client do not use Java serialization.
SERIAL_FILTER = ("maxdepth=40;maxrefs=100000;maxbytes=67108864;maxarray=10000000;"
                 "java.base/*;java.management/*;java.management.rmi/*;java.rmi/*;!*")
# RMI (the JMX reader, ops_jmx.py) otherwise waits minutes on a peer that accepted and never answers.
JVM_OPTIONS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:+ExitOnOutOfMemoryError", "-Xss512k",
               "-XX:MaxMetaspaceSize=128m", "-Dlog4j2.level=ERROR",
               "-Dsun.rmi.transport.tcp.responseTimeout=8000", "-Dsun.rmi.transport.tcp.handshakeTimeout=8000",
               f"-Djdk.serialFilter={SERIAL_FILTER}")
# The JVM needs none of the console's environment (its clients get their settings, secrets included, as
# properties over the bridge), so it gets only what locates Java and sets its locale: a JVM holding SECRET_KEY or
# DATABASE_URL would hand them to anyone who reaches it.
JVM_ENVIRONMENT = ("PATH", "JAVA_HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "HOME")


@dataclass
class HostJvm:
    """The host's JVM as this process knows it: from its state file, or started here (then `process` is ours and
    its exit status readable)."""

    pid: int
    port: int
    token: str
    process: subprocess.Popen | None = field(default=None, compare=False)

    def exit_description(self) -> str | None:
        """None while it runs; how it ended otherwise (its signal when this process started it)."""
        if self.process is not None:
            code = self.process.poll()
            if code is None:
                return None
            if code < 0:
                try:
                    return f"killed by {signal.Signals(-code).name}"
                except ValueError:
                    return f"killed by signal {-code}"
            return f"exit code {code}"
        return None if _is_our_jvm(self.pid) else f"process {self.pid} is gone"


def folder() -> Path:
    import gateway.kafka.sandbox.sockets as sockets  # not at the top: importing the sandbox imports this module

    return sockets.private_dir(sockets.effective_dir(sockets.configured_dir()))


def _is_our_jvm(pid: int) -> bool:
    """Whether `pid` is still a py4j JVM of this user (not a reused pid, not a zombie)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if "\nState:\tZ" in status:
        return False
    return MAIN_CLASS.encode() in command and os.stat(f"/proc/{pid}").st_uid == os.getuid()


def read_state(where: Path | None = None) -> HostJvm | None:
    """The JVM the state file names, if it still runs."""
    try:
        state = json.loads((where or folder()).joinpath(STATE_FILE).read_text())
        found = HostJvm(pid=int(state["pid"]), port=int(state["port"]), token=str(state["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return found if _is_our_jvm(found.pid) else None


MSG_BAD_HEAP = "KAFKA_JAVA_BRIDGE_HEAP_MB must be a whole number of MiB from {low} to {high}, not {value!r}."
HEAP_RANGE_MB = (64, 16384)


def heap_mb() -> int:
    value = getattr(settings, "KAFKA_JAVA_BRIDGE_HEAP_MB", 256)
    low, high = HEAP_RANGE_MB
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise KafkaRequestFailed(MSG_BAD_HEAP.format(low=low, high=high, value=value))
    return value


def find_or_start(known_dead: HostJvm | None = None) -> HostJvm:
    """The host's running JVM, started here if there is none (under the lock: racing processes start one).
    `known_dead` is one this process saw die: never handed back, even if its pid still shows for a moment."""
    where = folder()
    found = read_state(where)
    if found is not None and found != known_dead:
        return found
    import gateway.kafka.sandbox.sockets as sockets

    try:
        with sockets.file_lock(where / LOCK_FILE, START_TIMEOUT_S + 5):
            found = read_state(where)
            if found is not None and found != known_dead:
                return found
            if found is not None:  # dying: it is not waited for
                _kill(found.pid)
            started = _launch(where)
            write_secret_file(where / STATE_FILE, json.dumps({"pid": started.pid, "port": started.port,
                                                               "token": started.token}))
            return started
    except TimeoutError as exc:
        raise KafkaRequestFailed(MSG_JVM_NOT_STARTED.format(detail=exc)) from None


def _launch(where: Path) -> HostJvm:
    """Starts the JVM with `--enable-auth` (py4j makes a random token and prints it after the port, here to a 0600
    file in the private folder), detached in a session of its own."""
    libs = settings.KAFKA_TOOLS_LIBS
    if not os.path.isdir(libs):
        raise KafkaRequestFailed(MSG_NO_LIBS.format(libs=libs))
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    command = [java, "-classpath", os.pathsep.join((py4j_jar(), f"{libs}/*")), f"-Xmx{heap_mb()}m", *JVM_OPTIONS,
               MAIN_CLASS, "--enable-auth", "0"]
    environment = {name: os.environ[name] for name in JVM_ENVIRONMENT if name in os.environ}
    output = where / OUTPUT_FILE
    output.unlink(missing_ok=True)
    descriptor = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=descriptor, stderr=subprocess.DEVNULL,
                                   env=environment, close_fds=True, start_new_session=True)
    except OSError as exc:
        raise KafkaRequestFailed(MSG_JVM_NOT_STARTED.format(detail=exc)) from None
    finally:
        os.close(descriptor)
    try:
        port_line, token_line = _first_lines(process, output)
    finally:
        output.unlink(missing_ok=True)
    try:
        port = int(port_line)
    except ValueError:
        process.kill()
        process.wait()
        raise KafkaRequestFailed(MSG_JVM_NOT_STARTED.format(detail=port_line or "it said nothing")) from None
    return HostJvm(pid=process.pid, port=port, token=token_line.strip(), process=process)


def _first_lines(process: subprocess.Popen, output: Path) -> list[str]:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        lines = output.read_text().splitlines(keepends=True)
        if len(lines) >= 2 and lines[1].endswith("\n"):
            return lines[:2]
        if process.poll() is not None:
            raise KafkaRequestFailed(MSG_JVM_NOT_STARTED.format(detail=f"it exited at once ({process.returncode})"))
        time.sleep(0.02)
    process.kill()
    process.wait()
    raise KafkaRequestFailed(MSG_JVM_NOT_STARTED.format(detail=f"no port and token within {START_TIMEOUT_S:g} s"))


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def stop(where: Path | None = None) -> int | None:
    """Stops the JVM of the folder (asked first, killed after STOP_WAIT_S); returns its pid, None if none ran."""
    where = where or folder()
    found = read_state(where)
    (where / STATE_FILE).unlink(missing_ok=True)
    if found is None:
        return None
    try:
        os.kill(found.pid, signal.SIGTERM)
    except OSError:
        return found.pid
    deadline = time.monotonic() + STOP_WAIT_S
    while _is_our_jvm(found.pid) and time.monotonic() < deadline:
        try:  # ours to reap when this process started it
            os.waitpid(found.pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)
    if _is_our_jvm(found.pid):
        _kill(found.pid)
    return found.pid


def py4j_jar() -> str:
    import py4j

    for candidate in (os.path.join(sys.prefix, "share", "py4j"),
                      os.path.join(os.path.dirname(os.path.dirname(py4j.__file__)), "pyspark", "jars")):
        if os.path.isdir(candidate):
            for name in sorted(os.listdir(candidate)):
                if name.startswith("py4j") and name.endswith(".jar"):
                    return os.path.join(candidate, name)
    raise KafkaRequestFailed("py4j's jar was not found (it comes with pyspark): run `make deps`.")
