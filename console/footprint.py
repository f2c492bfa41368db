"""The memory the console's processes on this host hold, by kind, read from /proc: what each registered cluster
costs is visible in /health and /metrics rather than guessed.

- web, worker, beat, recorder: the processes `make run` supervises (their pids from keep_running's status files),
  each with its own children (gunicorn's and Celery's workers). Where nothing supervises them (production), only
  the process answering is known: it is reported as `this_process`.
- client: each cluster's Kafka client processes (gateway/kafka/sandbox/), however many lanes it has.
- jvm: the host's JVM for Kafka's Java Admin client (gateway/kafka/java/host_jvm.py), shared by every cluster.

RSS counts the pages a process shares with others (a forked worker's with its parent, the Python and librdkafka
libraries every client process maps) in each of them: summed, it is an upper bound. PSS divides each shared page
among the processes sharing it: summed, it is what the host pays.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from console.clusters.local_processes import supervised_processes
from gateway.kafka.java.host_jvm import read_state as java_bridge
from gateway.kafka.sandbox import host_client_processes

CONSOLE_KINDS = ("web", "worker", "beat", "recorder")  # of the supervised processes; the others are servers


def rss_bytes(pid: int) -> int | None:
    """The resident set of `pid`, None when it is gone or not ours to read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None  # a zombie has no VmRSS line


def pss_bytes(pid: int) -> int | None:
    """The proportional set of `pid` (its private pages and its share of shared ones), None when unknown."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _children_by_parent() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # the command may hold spaces and parentheses: the fields after its closing one are fixed
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    return children


def _tree(pid: int, children: dict[int, list[int]]) -> list[int]:
    found, waiting = [], [pid]
    while waiting:
        current = waiting.pop()
        found.append(current)
        waiting.extend(children.get(current, ()))
    return found


@dataclass
class KindMemory:
    processes: int = 0
    rss_bytes: int = 0
    pss_bytes: int = 0
    clusters: dict[str, dict] = field(default_factory=dict)  # client processes only: per cluster

    def add(self, pid: int) -> tuple[int, int] | None:
        """Counts `pid` in; its (RSS, PSS), None when it is gone."""
        rss = rss_bytes(pid)
        if rss is None:
            return None
        pss = pss_bytes(pid) or rss  # without smaps_rollup (an old kernel): the upper bound
        self.processes += 1
        self.rss_bytes += rss
        self.pss_bytes += pss
        return rss, pss

    def as_json(self) -> dict:
        answer = {"processes": self.processes, "rss_bytes": self.rss_bytes, "pss_bytes": self.pss_bytes}
        if self.clusters:
            answer["clusters"] = self.clusters
        return answer


def console_memory() -> dict[str, KindMemory]:
    """Kind -> its processes on this host and their RSS (kinds without a live process are left out)."""
    kinds: dict[str, KindMemory] = {}
    children = _children_by_parent()
    counted: set[int] = set()
    for name, status in supervised_processes().items():
        if name not in CONSOLE_KINDS or not status.pid:
            continue
        for pid in _tree(status.pid, children):  # the command keep_running started, and its workers
            if pid not in counted:
                counted.add(pid)
                kinds.setdefault(name, KindMemory()).add(pid)
    if os.getpid() not in counted:
        kinds.setdefault("this_process", KindMemory()).add(os.getpid())
    clients = KindMemory()
    for process in host_client_processes():
        measured = clients.add(process.pid)
        if measured is None:
            continue
        cluster = clients.clusters.setdefault(process.cluster, {"processes": 0, "rss_bytes": 0, "pss_bytes": 0})
        cluster["processes"] += 1
        cluster["rss_bytes"] += measured[0]
        cluster["pss_bytes"] += measured[1]
    if clients.processes:
        kinds["client"] = clients
    jvm = java_bridge()
    if jvm is not None:
        kinds.setdefault("jvm", KindMemory()).add(jvm.pid)
    return {kind: memory for kind, memory in kinds.items() if memory.processes}


def memory_report() -> dict:
    """For /health: each kind's processes, RSS and PSS, the client processes per cluster, and the totals."""
    kinds = console_memory()
    return {"kinds": {kind: memory.as_json() for kind, memory in kinds.items()},
            "total_rss_bytes": sum(memory.rss_bytes for memory in kinds.values()),
            "total_pss_bytes": sum(memory.pss_bytes for memory in kinds.values())}


def footprint_metrics(options) -> list:
    """The memory report as series: by kind, and each cluster's client processes and their memory."""
    from console.metrics.sources import gauge

    kinds = console_memory()
    rss = gauge("process_memory_rss_bytes", "Resident memory of the console's processes on the scraped host, by "
                "kind (web, worker, beat, recorder, this_process, client, jvm).", ["kind"])
    pss = gauge("process_memory_pss_bytes", "Proportional memory (PSS: shared pages divided among their sharers) "
                "of the console's processes on the scraped host, by kind.", ["kind"])
    processes = gauge("processes", "The console's processes on the scraped host, by kind.", ["kind"])
    for kind, memory in sorted(kinds.items()):
        rss.add_metric([kind], memory.rss_bytes)
        pss.add_metric([kind], memory.pss_bytes)
        processes.add_metric([kind], memory.processes)
    per_cluster = gauge("cluster_client_processes", "Kafka client processes of each cluster on the scraped host.",
                        ["cluster"])
    cluster_rss = gauge("cluster_client_memory_rss_bytes", "Resident memory of each cluster's Kafka client "
                        "processes on the scraped host.", ["cluster"])
    client = kinds.get("client")
    for cluster, figures in sorted(client.clusters.items() if client else []):
        per_cluster.add_metric([cluster], figures["processes"])
        cluster_rss.add_metric([cluster], figures["rss_bytes"])
    return [rss, pss, processes, per_cluster, cluster_rss]
