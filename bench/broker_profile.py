"""Where the brokers' CPU went while the pages were measured: a Java Flight Recording of each broker (the JDK's own
jcmd and jfr), summed over the brokers by thread and by the Kafka method at the top of each sample.

RequestMetrics (bench/broker_requests.py) only covers the request threads; on this machine the brokers take most
of a core during the mix while those threads account for a fraction of it. The recording samples every Java
thread (request handlers, network processors, the controller, the log manager's schedulers...), so it says where
the rest went. Garbage collection runs in native threads, which it does not sample: that share is what the
samples leave unexplained of the CPU the brokers spent (bench/scale.py's CPU line).
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

_THREAD = re.compile(r'sampledThread = "([^"]*)"')
_FRAME = re.compile(r"^\s+([\w$.<>]+)\(")


def start(pids: list[int], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for pid in pids:
        subprocess.run(["jcmd", str(pid), "JFR.start", "name=bench-mix", "settings=profile",
                        f"filename={folder / f'broker-{pid}.jfr'}"], capture_output=True, text=True, timeout=60,
                       check=True)


def stop(pids: list[int]) -> None:
    for pid in pids:
        subprocess.run(["jcmd", str(pid), "JFR.stop", "name=bench-mix"], capture_output=True, text=True, timeout=120,
                       check=True)


def thread_kind(name: str) -> str:
    """A thread's name without its numbers (pure): the pool it belongs to."""
    return re.sub(r"\d+", "N", name)


def parse(printed: str) -> tuple[Counter, Counter]:
    """Samples per thread kind, and per top Kafka frame (the first org.apache.kafka or kafka method from the top of
    the stack), from `jfr print --events jdk.ExecutionSample` (pure)."""
    threads: Counter = Counter()
    methods: Counter = Counter()
    thread, top_kafka, in_stack = None, None, False
    for line in printed.splitlines():
        if line.startswith("jdk.ExecutionSample"):
            thread, top_kafka, in_stack = None, None, False
        elif (found := _THREAD.search(line)) is not None:
            thread = thread_kind(found.group(1))
        elif "stackTrace = [" in line:
            in_stack = True
        elif in_stack and line.strip() == "]":
            in_stack = False
        elif in_stack and top_kafka is None and (frame := _FRAME.match(line)) is not None:
            method = frame.group(1)
            if method.startswith(("org.apache.kafka.", "kafka.")):
                top_kafka = method
        elif line.strip() == "}" and thread is not None:
            threads[thread] += 1
            methods[top_kafka or "(no Kafka frame)"] += 1
            thread = None
    return threads, methods


def summarise(folder: Path, top: int = 10) -> list[str]:
    """Markdown lines: the busiest thread kinds and Kafka methods over every recording in `folder`."""
    threads: Counter = Counter()
    methods: Counter = Counter()
    for recording in sorted(folder.glob("broker-*.jfr")):
        printed = subprocess.run(["jfr", "print", "--events", "jdk.ExecutionSample", "--stack-depth", "64",
                                  str(recording)], capture_output=True, text=True, timeout=600, check=True).stdout
        found_threads, found_methods = parse(printed)
        threads.update(found_threads)
        methods.update(found_methods)
    total = sum(threads.values()) or 1
    lines = ["| broker thread | samples | share |", "|---|---|---|"]
    lines += [f"| {name} | {n:,} | {n / total:.0%} |" for name, n in threads.most_common(top)]
    lines += ["", "| top Kafka method of a sample | samples | share |", "|---|---|---|"]
    lines += [f"| `{name}` | {n:,} | {n / total:.0%} |" for name, n in methods.most_common(top)]
    return lines
