"""Shared set-up for benchmarks: a broker (the local one, or a fresh one), a throwaway database, timing helpers,
the `--smoke` mode every bench script has, and the sections of bench/RESULTS.md."""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "RESULTS.md"
# The line a smoke run ends with, once every check held (tests/bench/test_smoke.py looks for it).
SMOKE_PASSED = "bench smoke run passed:"
SMOKE_HELP = ("the same run at a tiny size (seconds of work beyond starting its servers): its checks still hold, "
              "bench/RESULTS.md is not written")

# Set by parse_args when the run is a smoke run: write_section then leaves bench/RESULTS.md alone, and tool_runs()
# runs Kafka's command-line tools once instead of three times.
SMOKE = False
# The code a run measures is the tree as it was when the run started (parse_args): what changes during a long run
# is not in its figures. So is the machine's load then, before the bench's own: others' work shares the cores.
_COMMIT_AT_START: str | None = None
_LOAD_AT_START: float | None = None


class BenchCheckFailed(SystemExit):
    """A count the bench compares did not agree: its figures would mean nothing."""


def parse_args(parser: argparse.ArgumentParser, *, smoke: dict[str, object]) -> argparse.Namespace:
    """Adds --smoke to the bench's parser and parses the command line. With --smoke, `smoke` gives the defaults
    (the bench's own options, at a tiny size); options given on the command line still win."""
    global SMOKE, _COMMIT_AT_START, _LOAD_AT_START
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    args = parser.parse_args()
    _COMMIT_AT_START, _LOAD_AT_START = commit_line(), os.getloadavg()[0]
    if args.smoke:
        unknown = sorted(set(smoke) - set(vars(args)))
        if unknown:
            raise ValueError(f"smoke sizes for options the bench does not have: {unknown}")
        parser.set_defaults(**smoke)
        args = parser.parse_args()
        SMOKE = True
    return args


def check(ok: object, what: str) -> None:
    """Fails the run when `ok` is false: the bench's sanity (what it compares must agree), in full and smoke runs
    alike. Not `assert`, which `python -O` drops."""
    if not ok:
        raise BenchCheckFailed(f"bench check failed: {what}")


def tool_runs(full: int = 3) -> int:
    """How many times to time one of Kafka's command-line tools: `full`, or once in a smoke run (a JVM each)."""
    return 1 if SMOKE else full


@contextmanager
def bench_stack(name: str, *, offsets_partitions: int = 1):
    """Starts a fresh broker on free ports unless KAFKA_BOOTSTRAP_SERVERS is set, and a scratch SQLite database."""
    from devstack.kafka import KafkaNode, free_port

    work = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    node = None
    if not os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        node = KafkaNode(home=work / "kafka", port=free_port(), controller_port=free_port(), heap=("-Xms512m", "-Xmx1g"),
                         offsets_partitions=offsets_partitions)
        log = open(work / "broker.log", "w")
        node.start(stdout=log)
        node.wait_ready()
        os.environ["KAFKA_BOOTSTRAP_SERVERS"] = node.bootstrap
    # The bench's Kafka client processes listen in a folder of its own, so it neither uses a `make run`'s nor
    # leaves its own running (they are detached and would otherwise outlive it until idle).
    os.environ.update({"DJANGO_DEBUG": "1", "DATABASE_URL": f"sqlite:///{work / 'bench.sqlite3'}",
                       "DJANGO_SETTINGS_MODULE": "console.settings", "DJANGO_ALLOW_ASYNC_UNSAFE": "true",
                       "KAFKA_CLIENT_SOCKET_DIR": str(work / "kafka-clients")})
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    try:
        yield node
    finally:
        from gateway.kafka.sandbox import stop_host_processes

        stop_host_processes()
        if node is not None:
            node.stop()
        shutil.rmtree(work, ignore_errors=True)


def kafka_tool_ms(main_class: str, *args: str, timeout: float = 900) -> float:
    """Wall-clock milliseconds of one run of Kafka's own command-line tool (JVM start included)."""
    from devstack.kafka import java_classpath

    started = time.perf_counter()
    result = subprocess.run(["java", "-Xmx512m", "-cp", java_classpath(), main_class, "--bootstrap-server",
                             os.environ["KAFKA_BOOTSTRAP_SERVERS"], *args], capture_output=True, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])
    return (time.perf_counter() - started) * 1000


def bench_client():
    """get(url) as a logged-in superuser through Django's test client; fails loudly on anything but 200."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_superuser("bench", password="bench-pass-123")
    client = Client(SERVER_NAME="localhost")
    client.force_login(user)

    def get(url: str):
        response = client.get(url)
        check(response.status_code == 200, f"{url} answered {response.status_code}: "
                                           f"{response.content.decode(errors='replace')[-1500:]}")
        return response

    return user, get


def timed(fn: Callable[[], object], repeat: int, before: Callable[[], None] | None = None) -> list[float]:
    """Wall-clock milliseconds of `repeat` calls; `before` runs untimed before each (e.g. clear a cache)."""
    samples = []
    for _ in range(repeat):
        if before:
            before()
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return f"median {statistics.median(ordered):.0f} ms, p95 {p95:.0f} ms (n={len(ordered)})"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        cpu = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text()).group(1)
    except (OSError, AttributeError):
        pass
    memory = ""
    try:
        kib = int(re.search(r"MemTotal:\s*(\d+)", Path("/proc/meminfo").read_text()).group(1))
        memory = f", {kib / 1024 / 1024:.0f} GiB RAM"
    except (OSError, AttributeError):
        pass
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    load = "" if _LOAD_AT_START is None else f"; load average {_LOAD_AT_START:.2f} (1 min) as the run started"
    return (f"{os.cpu_count()} cores ({cpu}){memory}; {platform.platform()}; Python {platform.python_version()}; "
            f"{java}{load}")


def commit_line() -> str:
    """Which code a section's figures were measured on: the commit checked out, and whether the tree had changes
    beyond bench/RESULTS.md (which `make bench` rewrites as it goes). The day is in the section's title."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--", ".", ":!bench/RESULTS.md"], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "Commit: unknown (not a git checkout)."
    return f"Commit: `{sha}`{' with uncommitted changes' if changed else ''}."


def write_section(name: str, body: str) -> None:
    """Replaces this benchmark's section in bench/RESULTS.md, keeping the others; the commit goes under its title
    (which holds the day). A smoke run writes nothing and says that it passed."""
    if SMOKE:
        print(f"{SMOKE_PASSED} {name} (bench/RESULTS.md not written)", flush=True)
        return
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\nReproduce each section with the command it names.\n"
    title, _, rest = body.strip().partition("\n")
    block = f"{start}\n{title}\n\n{_COMMIT_AT_START or commit_line()}\n{rest.rstrip()}\n{end}"
    if start in text:
        text = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text)


def wait_for_leaders(admin, topics: list[str], timeout: float = 120.0) -> None:
    """Returns once the broker's metadata names a leader for every partition of `topics` (`admin` a confluent-kafka
    AdminClient): a fresh topic's partitions get theirs within moments, and what is produced or committed before
    is retried or refused."""
    wanted = set(topics)
    deadline = time.monotonic() + timeout
    while True:
        found = admin.list_topics(timeout=30).topics
        if all(name in found and found[name].error is None and found[name].partitions
               and all(p.leader >= 0 for p in found[name].partitions.values()) for name in wanted):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"not every partition of {len(wanted)} topics had a leader after {timeout:.0f} s")
        time.sleep(0.2)


def produce_filler(producer, topics: list[str], partitions: int, records: int) -> None:
    """`records` small records on every partition of `topics`, waiting out a full local queue; then flushes."""
    for name in topics:
        for p in range(partitions):
            for _ in range(records):
                while True:
                    try:
                        producer.produce(name, value=b"x" * 20, partition=p)
                        break
                    except BufferError:
                        producer.poll(0.1)
    left = producer.flush(300)
    if left:
        raise RuntimeError(f"{left} records not delivered")


def commit_as_admin(admin, requests: list, window: int = 500) -> None:
    """Commits each group's offsets (`requests`: ConsumerGroupTopicPartitions, sent together) through a
    confluent-kafka AdminClient; those refused, or answered with a partition error (a fresh broker's first commits
    say COORDINATOR_LOAD_IN_PROGRESS in a result that succeeds, and are lost), go again. At most `window` awaited
    together."""
    for start in range(0, len(requests), window):
        _commit_window(admin, requests[start:start + window])


def _commit_window(admin, requests: list) -> None:
    for attempt in range(30):
        sent = [(r, admin.alter_consumer_group_offsets([r], request_timeout=60)[r.group_id]) for r in requests]
        failed = []
        for request, future in sent:
            try:
                # A commit that succeeded can still have failed for some partitions (a leader not known yet).
                if any(tp.error for tp in future.result().topic_partitions):
                    failed.append(request)
            except Exception:  # noqa: BLE001 - COORDINATOR_LOAD_IN_PROGRESS and the like: asked again below
                failed.append(request)
        if not failed:
            return
        requests = failed
        time.sleep(0.5)
    raise RuntimeError(f"{len(requests)} commits still refused, e.g. {requests[0].group_id}")
