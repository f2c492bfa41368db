"""Kafka client processes on one host: W worker processes (gunicorn's, Celery's) asking C clusters.

    .venv/bin/python bench/client_processes.py [--workers 8] [--clusters 20] [--repeat 30]

Each cluster is a registration of the one bench broker under its own name. Every worker process asks every
cluster once (the client process is started by whichever worker comes first), then all workers time ListGroups
on one cluster at the same time, through the shared client process and with a raw confluent-kafka AdminClient in
the same worker. Counts the client processes and their memory (RSS) against what one per cluster per process
(the design before) would hold: W x C processes of the median client process's size. Writes bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import bench_stack, check, machine, parse_args, summary, write_section  # noqa: E402

WORKER = """
import json, sys, time, django
django.setup()
from confluent_kafka.admin import AdminClient
from gateway.kafka import sandbox
from gateway.kafka.isolated import IsolatedKafkaAdmin
from gateway.kafka.types import ClusterConnection
bootstrap, clusters, repeat, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
admins = [IsolatedKafkaAdmin(ClusterConnection(f"cp-{c:02d}", bootstrap), timeout=10) for c in range(clusters)]
for admin in admins:
    admin.list_groups()
print("ready", flush=True)
while not __import__("os").path.exists(go):
    time.sleep(0.01)
raw = AdminClient({"bootstrap.servers": bootstrap})
raw.list_consumer_groups(request_timeout=10).result()
shared, direct = [], []
for _ in range(repeat):
    started = time.perf_counter(); admins[0].list_groups(); shared.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter(); raw.list_consumer_groups(request_timeout=10).result()
    direct.append((time.perf_counter() - started) * 1000)
print(json.dumps({"pids": sandbox.child_pids(), "shared": shared, "direct": direct}), flush=True)
"""


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=30)
    args = parse_args(parser, smoke={"workers": 2, "clusters": 3, "repeat": 2})

    sockets = Path(tempfile.mkdtemp(prefix="bench-kc-"))
    os.environ["KAFKA_CLIENT_SOCKET_DIR"] = str(sockets)  # never a `make run`'s client processes
    go = sockets / "go"
    try:
        with bench_stack("client-processes"):
            from gateway.kafka import sandbox

            bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
            workers = [subprocess.Popen([sys.executable, "-c", WORKER, bootstrap, str(args.clusters),
                                         str(args.repeat), str(go)], cwd=Path(__file__).resolve().parents[1],
                                        stdout=subprocess.PIPE, text=True) for _ in range(args.workers)]
            for worker in workers:
                check(worker.stdout.readline().strip() == "ready", "a worker failed before asking every cluster")
            go.touch()  # all at once
            results = [json.loads(worker.communicate(timeout=600)[0].strip().splitlines()[-1]) for worker in workers]
            pids = sorted({pid for result in results for pid in result["pids"].values()})
            sizes = [rss_mib(pid) for pid in pids]
            sandbox.stop_host_processes()
    finally:
        shutil.rmtree(sockets, ignore_errors=True)

    shared = [ms for result in results for ms in result["shared"]]
    direct = [ms for result in results for ms in result["direct"]]
    same = all(result["pids"] == results[0]["pids"] for result in results)
    check(same and len(pids) == args.clusters, f"{len(pids)} client processes for {args.clusters} clusters, the "
                                               f"same in every worker: {same}")
    check(len(shared) == len(direct) == args.workers * args.repeat, "a worker timed fewer calls than asked")
    before = args.workers * args.clusters
    median_size = statistics.median(sizes)
    body = f"""## Kafka client processes per host ({datetime.now(UTC):%Y-%m-%d})

`.venv/bin/python bench/client_processes.py --workers {args.workers} --clusters {args.clusters} --repeat {args.repeat}`

Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1), registered as {args.clusters} clusters.
{args.workers} worker processes each ask every cluster, then all time ListGroups on one cluster at once.

| | client processes | their memory (RSS) |
|---|---|---|
| one per cluster per host (now) | **{len(pids)}** (every worker saw the same pid per cluster: {"yes" if same else "NO"}) | {sum(sizes):,.0f} MiB (median {median_size:.0f} MiB each) |
| one per cluster per process (before) | {before} | about {before * median_size:,.0f} MiB ({before} x the median) |

ListGroups, {args.workers} workers calling at once ({len(shared)} calls each way):

| path | time |
|---|---|
| through the cluster's shared client process | {summary(shared)} |
| raw confluent-kafka AdminClient in the worker | {summary(direct)} |

Ratio (median, shared / raw): **{statistics.median(shared) / statistics.median(direct):.2f}**.
"""
    write_section("client-processes", body)
    print(body)


if __name__ == "__main__":
    main()
