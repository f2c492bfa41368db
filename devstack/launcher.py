"""How the dev stack starts its servers (Kafka, the schema registry, the identity provider, S3Proxy, Spark's
daemons), one way for all: a JVM on the jars Maven fetched into .cache/, its output appended to a log, a
readiness check polled until it answers, the process dies or the time is up (the error then quotes the log's
last lines, which say why far more often than an exit code does), and a stop that ends in a kill."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# For the small servers that only answer a test or a developer: the client compiler alone gets them answering
# sooner, and a serial collector adds no threads or regions to the heap they are given.
SMALL_JVM = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
LOG_TAIL_LINES = 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(count: int) -> list[int]:
    """`count` different free ports below the kernel's ephemeral range. A JVM with JMX on also listens on a port
    the kernel picks (the agent's own connector), and the kernel readily picks one that free_port() just gave
    back, which the next broker of a cluster was about to bind; ports under the range are never picked so."""
    low = _ephemeral_low()
    span = range(max(1024, low - 12000), low)
    held: list[socket.socket] = []
    try:
        for port in random.sample(span, min(len(span), 400)):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            held.append(s)
            if len(held) == count:
                return [h.getsockname()[1] for h in held]
    finally:
        for s in held:
            s.close()
    return [free_port() for _ in range(count)]  # a crowded range: the kernel's choice, as before


def free_port_with(offsets: tuple[int, ...]) -> int:
    """A free port p, below the kernel's ephemeral range as free_ports() gives, with p + each offset free and below
    it too: a broker at p takes its controller and JMX ports at fixed distances (`make run`'s convention), and a port
    inside the range can be handed to any outgoing connection while the broker's JVM is still starting."""
    low, top = _ephemeral_low(), max(offsets, default=0)
    span = range(max(1024, low - 12000), low - top)
    for port in random.sample(span, min(len(span), 400)):
        held: list[socket.socket] = []
        try:
            for offset in (0, *offsets):
                s = socket.socket()
                held.append(s)
                s.bind(("127.0.0.1", port + offset))
            return port
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError(f"no free port with {offsets} free beside it below {low}")


def maven_jars(libs: Path, pattern: str, missing: str) -> list[Path]:
    """The jars in `libs` whose names match `pattern`, sorted by name; exits with `missing` (which says which
    `make` target fetches them) when there are none."""
    jars = sorted(libs.glob(pattern)) if libs.is_dir() else []
    if not jars:
        raise SystemExit(missing)
    return jars


def java_command(main: str | Path, *args: str | Path, heap: Sequence[str], options: Sequence[str] = (),
                 classpath: str | None = None) -> list[str]:
    """`java` running `main`: a class on `classpath`, or without a classpath an executable jar."""
    command = ["java", *heap, *options]
    command += ["-cp", classpath, str(main)] if classpath is not None else ["-jar", str(main)]
    return [*command, *map(str, args)]


def start_logged(command: list[str], log: Path | IO | int | None, *, cwd: Path | None = None,
                 env: dict[str, str] | None = None, new_session: bool = False) -> subprocess.Popen:
    """Starts `command` with nothing on its stdin and its output appended to `log` (a path, a file already open,
    subprocess.PIPE, or None to share this process's output). `new_session` puts it in a process group of its
    own, for servers that start children of their own (Spark's launch scripts)."""
    options = {"cwd": cwd, "env": env, "stdin": subprocess.DEVNULL, "stderr": subprocess.STDOUT,
               "start_new_session": new_session}
    if isinstance(log, Path):
        with open(log, "a") as out:
            return subprocess.Popen(command, stdout=out, **options)
    return subprocess.Popen(command, stdout=log, **options)


@dataclass(frozen=True)
class Watched:
    """A process a readiness wait gives up on as soon as it exits, and the log that says why."""

    name: str  # "the schema registry", "Kafka node 2": said in the error
    process: subprocess.Popen | None
    log: Path | None = None


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, errors="replace") as log:
            return "".join(deque(log, maxlen=lines)).rstrip()
    except OSError:
        return ""


def _see(logs: Sequence[Path]) -> str:
    said = []
    for log in logs:
        tail = log_tail(log)
        said.append(f"see {log}" + (f"; its last lines:\n{tail}" if tail else ""))
    return "; " + "\n".join(said) if said else ""


def wait_until_ready(ready: Callable[[], bool], *, what: str, watch: Sequence[Watched], timeout: float,
                     interval: float = 0.25) -> None:
    """Polls `ready` (which answers False, never raises, while the server is not up yet) until it says True.
    Raises RuntimeError as soon as a watched process exits, TimeoutError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for item in watch:
            if item.process is not None and item.process.poll() is not None:
                raise RuntimeError(f"{item.name} exited with code {item.process.returncode} before it was ready"
                                   + _see([item.log] if item.log else []))
        if ready():
            return
        time.sleep(interval)
    raise TimeoutError(f"{what} did not answer within {timeout:.0f} s"
                       + _see([item.log for item in watch if item.log]))


def stop_process(process: subprocess.Popen | None, *, timeout: float = 15.0, group: bool = False) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds; `group` signals its whole process
    group (started with `new_session`)."""
    if process is None or process.poll() is not None:
        return

    def send(signum: int) -> None:
        if group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)

    send(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        process.wait()
