"""The pieces of bench/scale.py that start, seed and watch its servers: the process stack, PostgreSQL, the
seeding of topics and groups, the churning client, and where the machine's CPU went while pages were measured."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.common import ROOT, commit_as_admin, produce_filler
from bench.lag_scale import SEED_IN_FLIGHT

PARTITIONS = 4
PYTHON = str(ROOT / ".venv" / "bin" / "python")
BLOB_KEY = "console:topics:snapshot:local"  # topics/table.py RedisStore: the table
STAMP_KEY = f"{BLOB_KEY}:stamp"  # its taken_at
USERNAME, PASSWORD = "bench", "bench-scale-pass-123"


def topic_name(i: int) -> str:
    return f"scale-{i:05d}"


def group_name(g: int) -> str:
    return f"scale-group-{g:05d}"


# -- the servers --------------------------------------------------------------------------------------------

class Stack:
    """The processes this bench starts, each in its own session so it and its children stop together."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.processes: list[tuple[str, subprocess.Popen]] = []
        # The console's Kafka client processes detach (a session of their own, one per cluster for the host);
        # their environment names this folder, which tells them from anyone else's.
        self.client_dir = work / "kafka-clients"

    def client_pids(self) -> list[int]:
        marker = f"KAFKA_CLIENT_SOCKET_DIR={self.client_dir}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and b"gateway.kafka.sandbox.child" in (entry / "cmdline").read_bytes() \
                        and marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def spawn(self, name: str, command: list[str], env: dict[str, str]) -> subprocess.Popen:
        log = open(self.work / f"{name}.log", "w")
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        self.processes.append((name, process))
        return process

    def check_alive(self) -> None:
        for name, process in self.processes:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}; see {self.work / (name + '.log')}")

    def stop(self) -> None:
        for _, process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for _, process in reversed(self.processes):
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            try:  # children left in the group
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in self.client_pids():
            os.kill(pid, signal.SIGKILL)
        # The host's Java Admin JVM is detached too, and only its client processes (killed above) would have
        # stopped it: left alone, it outlived the run with nobody able to find it.
        from gateway.kafka.java import host_jvm

        host_jvm.stop(self.client_dir)


def start_postgres(folder: Path) -> str:
    from devstack.kafka import free_port

    result = subprocess.run(["bash", str(ROOT / "devstack" / "postgres.sh"), "start", str(folder),
                             str(free_port())], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"PostgreSQL did not start: {result.stderr[-2000:]}")
    return result.stdout.strip().splitlines()[-1]


def stop_postgres(folder: Path) -> None:
    subprocess.run(["bash", str(ROOT / "devstack" / "postgres.sh"), "stop", str(folder)],
                   capture_output=True, check=False)


@contextmanager
def django_on_postgres(prefix: str) -> Iterator[None]:
    """This process's Django on a PostgreSQL of its own, migrated, in a temporary folder removed at the end: for the
    benches that time what the console does in the database, without Kafka."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        os.environ.update({"DATABASE_URL": start_postgres(folder / "postgres"), "DJANGO_DEBUG": "0",
                           "SECRET_KEY": secrets.token_urlsafe(40), "AUDIT_HASH_KEY": secrets.token_urlsafe(40),
                           "DJANGO_SETTINGS_MODULE": "console.settings", "LOG_LEVEL": "WARNING"})
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        yield
    finally:
        stop_postgres(folder / "postgres")
        shutil.rmtree(folder, ignore_errors=True)


def manage(env: dict[str, str], *args: str) -> None:
    result = subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)}: {result.stderr[-2000:]}")


# -- seeding ------------------------------------------------------------------------------------------------

def create_topics(admin, names: list[str]) -> None:
    from confluent_kafka.admin import NewTopic

    for start in range(0, len(names), 250):
        futures = admin.create_topics([NewTopic(n, PARTITIONS, 1) for n in names[start:start + 250]],
                                      operation_timeout=120)
        for future in futures.values():
            future.result()


def wait_for_leaders(admin, expected_partitions: int, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        metadata = admin.list_topics(timeout=60)
        led = sum(1 for name, t in metadata.topics.items() if name.startswith("scale-")
                  for p in t.partitions.values() if p.leader >= 0)
        if led >= expected_partitions:
            return
        time.sleep(2)
    raise TimeoutError(f"not every partition had a leader after {timeout:.0f} s")


def seed(bootstrap: str, topics: int, groups: int, records: int) -> dict[str, float]:
    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    names = [topic_name(i) for i in range(topics)]
    took = {}
    started = time.perf_counter()
    create_topics(admin, names)
    wait_for_leaders(admin, topics * PARTITIONS)
    took["topics"] = time.perf_counter() - started
    started = time.perf_counter()
    if records:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.num.messages": 10000,
                             "log_level": 0})
        produce_filler(producer, names, PARTITIONS, records)
    took["records"] = time.perf_counter() - started
    started = time.perf_counter()
    requests = [ConsumerGroupTopicPartitions(group_name(g), [TopicPartition(names[g % topics], p, g % (records + 1))
                                                              for p in range(PARTITIONS)])
                for g in range(groups)]
    for start in range(0, groups, SEED_IN_FLIGHT):
        commit_as_admin(admin, requests[start:start + SEED_IN_FLIGHT])
    took["groups"] = time.perf_counter() - started
    return took


class Churn(threading.Thread):
    """Another client creating a topic and deleting an older one every second, as CI pipelines do."""

    def __init__(self, bootstrap: str, interval: float, keep: int = 5) -> None:
        super().__init__(daemon=True)
        from confluent_kafka.admin import AdminClient

        self.admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
        self.interval, self.keep = interval, keep
        self.stopping = threading.Event()
        self.created = self.deleted = 0
        self.errors: list[str] = []

    def run(self) -> None:
        from confluent_kafka.admin import NewTopic

        alive: list[str] = []
        n = 0
        while not self.stopping.wait(self.interval):
            name = f"churn-{os.getpid()}-{n:05d}"
            n += 1
            try:
                self.admin.create_topics([NewTopic(name, PARTITIONS, 1)], operation_timeout=30)[name].result()
                alive.append(name)
                self.created += 1
                if len(alive) > self.keep:
                    old = alive.pop(0)
                    self.admin.delete_topics([old], operation_timeout=30)[old].result()
                    self.deleted += 1
            except Exception as exc:  # noqa: BLE001 - counted and reported: the churn must go on
                self.errors.append(str(exc)[:200])


# -- measuring ----------------------------------------------------------------------------------------------

def login(base: str):
    import requests

    session = requests.Session()
    page = session.get(f"{base}/accounts/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    answer = session.post(f"{base}/accounts/login/", data={"username": USERNAME, "password": PASSWORD,
                                                           "csrfmiddlewaretoken": token},
                          headers={"Referer": f"{base}/accounts/login/"}, timeout=30, allow_redirects=False)
    if answer.status_code != 302:
        raise RuntimeError(f"login failed with {answer.status_code}: {answer.text[-500:]}")
    return session


def redis_stamp(client) -> bytes | None:
    return client.get(STAMP_KEY)


def table_build_s(client) -> float | None:
    """How long building the shared topic table now in Redis took (its blob says)."""
    from topics import table

    blob = client.get(BLOB_KEY)
    decoded = table.decode(blob) if blob is not None else None
    return None if decoded is None else decoded[1].build_s


def wait_until(what: str, check, timeout: float, stack: Stack) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        stack.check_alive()
        if check():
            return time.monotonic() - started
        time.sleep(1)
    raise TimeoutError(f"{what}: not after {timeout:.0f} s")


def between_sweeps(stack: Stack, cluster: str = "local") -> None:
    """Returns right after a lag sweep of `cluster` has ended (its claim released).

    The bench's own measuring tools start JVMs (JmxTool for each broker, Kafka's CLI). On this 2-core machine,
    three of them starting together took most of a core for five seconds, and the sweep then running stored its
    samples twice as slowly. Started in the gap after a sweep (every 30 s, about 10 s each), they leave the
    sweeps measured to the console's own load."""
    from offsets.models import LagSweep

    def last_sweep():  # a sweep's outcome is written before its claim is released; a small one lasts under 1 s
        return LagSweep.objects.filter(cluster=cluster).values_list("last_ok_at", "last_error_at",
                                                                   "running_since").first()

    before = last_sweep()
    wait_until("a lag sweep ending", lambda: (now := last_sweep())[:2] != before[:2] and now[2] is None, 90, stack)


def process_memory(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


class ServedBy:
    """Which gunicorn worker answered each request, read from the access log (requests go one at a time)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0

    def next_pid(self, timeout: float = 5.0) -> str | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.path) as log:
                log.seek(self.offset)
                line = log.readline()
                if line.endswith("\n"):
                    self.offset = log.tell()
                    return line.split()[0]
            time.sleep(0.01)
        return None


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def plain_text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]


def row(samples: list[float]) -> str:
    if not samples:
        return "| — | — | — | 0 |"
    return f"| {statistics.median(samples):.0f} ms | {p95(samples):.0f} ms | {max(samples):.0f} ms | {len(samples)} |"


# -- where the CPU went -------------------------------------------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _process_table() -> dict[int, tuple[int, bytes, int]]:
    """pid -> (parent pid, command line, CPU ticks spent: user + system) for every process we may read."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # the command name in parentheses may hold spaces
        table[int(entry.name)] = (int(fields[1]), cmdline, int(fields[11]) + int(fields[12]))
    return table


class CpuMeter:
    """CPU seconds each part of the stack spent between start() and stop(), by process ancestry: a process counts
    for the first of its ancestors (or itself) that is a part's root. Processes that ended in between are lost."""

    def __init__(self, roots: dict[int, str], markers: dict[bytes, str]) -> None:
        self.roots, self.markers = roots, markers  # pid -> part; a command-line fragment -> part
        self.before: dict[int, int] = {}
        self.started = 0.0

    def _part(self, pid: int, table: dict[int, tuple[int, bytes, int]]) -> str | None:
        seen = 0
        while pid in table and seen < 64:
            if pid in self.roots:
                return self.roots[pid]
            for marker, part in self.markers.items():
                if marker in table[pid][1]:
                    return part
            pid, seen = table[pid][0], seen + 1
        return None

    def start(self) -> None:
        self.before = {pid: ticks for pid, (_, _, ticks) in _process_table().items()}
        self.started = time.perf_counter()

    def stop(self) -> tuple[float, dict[str, float]]:
        table = _process_table()
        wall = time.perf_counter() - self.started
        spent: dict[str, float] = {}
        for pid, (_, _, ticks) in table.items():
            part = self._part(pid, table)
            if part is not None:
                spent[part] = spent.get(part, 0.0) + (ticks - self.before.get(pid, 0)) / CLOCK_TICKS
        return wall, dict(sorted(spent.items(), key=lambda item: -item[1]))


class Profiles:
    """`py-spy record` of each Python part of the stack while the pages are measured (--profile DIR): collapsed
    stacks per part, and a summary of where each spent its samples, to tell which work took the CPU the pages
    waited for. py-spy is not a dependency of the console; without it the bench says so and measures anyway."""

    def __init__(self, folder: Path | None, rate: int = 50) -> None:
        self.folder, self.rate = folder, rate
        self.running: list[tuple[str, subprocess.Popen]] = []

    def start(self, parts: dict[str, int]) -> None:
        if self.folder is None:
            return
        spy = ROOT / ".venv" / "bin" / "py-spy"
        if not spy.exists():
            print(f"--profile: {spy} not found (.venv/bin/pip install py-spy); not profiling", flush=True)
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for part, pid in parts.items():
            out = self.folder / f"{part}.txt"
            self.running.append((part, subprocess.Popen(
                [str(spy), "record", "--format", "raw", "--rate", str(self.rate), "--subprocesses", "--nonblocking",
                 "--pid", str(pid), "--output", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))

    def stop(self) -> list[str]:
        """Stops the recorders and returns, per part, its ten busiest functions (self samples) as text lines."""
        lines = []
        for _, process in self.running:
            process.send_signal(signal.SIGINT)
        for part, process in self.running:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
            lines += [f"{part}:", *summarise_collapsed(self.folder / f"{part}.txt")]
        return lines


def summarise_collapsed(path: Path, top: int = 10) -> list[str]:
    """From py-spy's collapsed stacks: the functions with the most samples at the top of the stack (self), and the
    console's own functions with the most samples anywhere in the stack (inclusive: which of its work it was)."""
    own = tuple(f"({name}/" for name in ("console", "offsets", "topics", "records", "access", "alerts",
                                            "replication", "transactions", "sparkjobs", "bench"))
    leaves: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = 0
    if not path.exists():
        return ["  (no profile written)"]
    for line in path.read_text(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        frames = stack.split(";")
        leaves[frames[-1]] = leaves.get(frames[-1], 0) + int(n)
        for frame in set(frames):
            if any(marker in frame for marker in own):  # py-spy names frames by module path
                inclusive[frame] = inclusive.get(frame, 0) + int(n)
        total += int(n)
    if not total:
        return ["  (no samples)"]

    def ranked(counts: dict[str, int]) -> list[str]:
        return [f"    {n / total:6.1%}  {frame[:150]}"
                for frame, n in sorted(counts.items(), key=lambda item: -item[1])[:top]]
    return [f"  {total} samples; self:", *ranked(leaves), "  the console's functions, inclusive:", *ranked(inclusive)]
