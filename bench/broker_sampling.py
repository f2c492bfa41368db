"""What broker-metrics sampling costs: a fresh three-broker cluster (JMX on loopback) with topics that carry
traffic, sampled by the same sweep beat runs (brokers/sampler.py: JMX through the console's JVM bridge in the
cluster's Kafka client process, rows stored in a scratch SQLite database, minute roll-up and pruning).

    .venv/bin/python bench/broker_sampling.py [--topics 50] [--sweeps 30] [--interval 30]

CPU is read from /proc for every process the console uses for it: this one (the sampler and the database), the
cluster's Kafka client process and the JVM bridge under it. Sweeps run back to back; their CPU time per sweep over
the interval is the share of one core that sampling every `--interval` seconds costs. The brokers' own JMX work is
measured too: their CPU during the sweeps minus their CPU over as long a time left alone.
Writes bench/RESULTS.md; the last line printed is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import check, machine, parse_args, write_section  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int, *, tree: bool = True) -> float:
    """User + system CPU seconds of a process (and of its descendants, alive ones, when `tree`)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    total = (int(fields[11]) + int(fields[12])) / TICKS
    if tree:
        for child in _children(pid):
            total += cpu_s(child)
    return total


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--sweeps", type=int, default=30)
    parser.add_argument("--interval", type=float, default=30.0)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds the brokers' idle CPU is measured over")
    args = parse_args(parser, smoke={"topics": 3, "sweeps": 2, "idle": 1.0})

    work = Path(tempfile.mkdtemp(prefix="bench-broker-sampling-"))
    os.environ.update({"DJANGO_DEBUG": "1", "DATABASE_URL": f"sqlite:///{work / 'bench.sqlite3'}",
                       "DJANGO_SETTINGS_MODULE": "console.settings", "DJANGO_ENV_FILE": "",
                       "KAFKA_CLIENT_SOCKET_DIR": str(work / "kafka-clients"), "BROKER_METRICS_LOCAL_JMX": ""})
    from devstack.kafka import KafkaCluster

    cluster = KafkaCluster(work / "kafka")
    cluster.start()
    try:
        cluster.wait_ready()
        import django

        django.setup()
        from confluent_kafka import Producer
        from confluent_kafka.admin import AdminClient, NewTopic
        from django.core.management import call_command

        from brokers.models import BrokerSample
        from brokers.sampler import broker_metrics_sample_all
        from console.clusters.models import Cluster
        from gateway.kafka.sandbox import child_pids, stop_host_processes
        from brokers.models import MetricsSource

        call_command("migrate", verbosity=0)
        Cluster.objects.create(name="bench3", bootstrap_servers=cluster.bootstrap)
        MetricsSource.objects.create(cluster="bench3", jmx=",".join(
            f"{n.node_id}=127.0.0.1:{n.jmx_port}" for n in cluster.nodes))
        names = [f"bench-{i:03d}" for i in range(args.topics)]
        kafka_admin = AdminClient({"bootstrap.servers": cluster.bootstrap})  # kept: its futures die with it
        for future in kafka_admin.create_topics([NewTopic(n, 3, replication_factor=3) for n in names]).values():
            future.result(30)
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "linger.ms": 5})
        for n in names:  # every topic's meters exist on every broker that leads one of its partitions
            for p in range(3):
                producer.produce(n, value=bytes(200), partition=p)
        producer.flush(30)
        for _ in range(3):  # the JVM bridge started, connections made, classes compiled
            broker_metrics_sample_all()
        console_pids = [os.getpid(), *child_pids().values()]
        brokers = [n.process.pid for n in cluster.nodes]

        def broker_cpu() -> float:
            return sum(cpu_s(pid) for pid in brokers)

        idle_start, idle_wall = broker_cpu(), time.monotonic()
        time.sleep(args.idle)
        idle_rate = (broker_cpu() - idle_start) / (time.monotonic() - idle_wall)
        console_before = sum(cpu_s(pid) for pid in console_pids)
        broker_before, wall_before = broker_cpu(), time.monotonic()
        durations = []
        for _ in range(args.sweeps):
            began = time.monotonic()
            outcome = broker_metrics_sample_all()
            durations.append(time.monotonic() - began)
            check(outcome == {"bench3": "ok"}, f"a sweep of the three brokers said {outcome}")
        wall = time.monotonic() - wall_before
        console_cpu = sum(cpu_s(pid) for pid in console_pids) - console_before
        broker_extra = max(0.0, broker_cpu() - broker_before - idle_rate * wall)
        rows = BrokerSample.objects.filter(cluster="bench3").count()
        raw = BrokerSample.objects.filter(cluster="bench3", step=BrokerSample.RAW)
        brokers_read = set(raw.filter(topic="").values_list("broker", flat=True))
        topics_read = set(raw.exclude(topic="").values_list("topic", flat=True))
        check(brokers_read == {n.node_id for n in cluster.nodes}, f"brokers sampled: {sorted(brokers_read)}")
        check(topics_read >= set(names), f"topics sampled: {len(topics_read & set(names))} of {len(names)}")
        stop_host_processes()
    finally:
        cluster.stop(kill=True)
        shutil.rmtree(work, ignore_errors=True)

    per_sweep = console_cpu / args.sweeps
    figures = {"brokers": 3, "topics": args.topics, "sweeps": args.sweeps, "interval_s": args.interval,
               "sweep_ms_median": round(sorted(durations)[len(durations) // 2] * 1000, 1),
               "console_cpu_ms_per_sweep": round(per_sweep * 1000, 1),
               "console_core_share_pct": round(100 * per_sweep / args.interval, 3),
               "brokers_cpu_ms_per_sweep": round(broker_extra / args.sweeps * 1000, 1),
               "brokers_core_share_pct": round(100 * broker_extra / args.sweeps / args.interval, 3),
               "rows_stored": rows}
    body = f"""## Broker metrics sampling ({time.strftime('%Y-%m-%d')})

`.venv/bin/python bench/broker_sampling.py --topics {args.topics} --sweeps {args.sweeps} --interval {args.interval:g} --idle {args.idle:g}`

Machine: {machine()}. Three KRaft brokers (Kafka 4.3.1) started by the benchmark, JMX on loopback; {args.topics} topics
× 3 partitions × 3 replicas, each written to, so every broker has {args.topics} topics' meters to read.

| what | figure |
|---|---|
| one sweep of the three brokers (wall, median) | {figures['sweep_ms_median']} ms |
| console CPU per sweep (sampler + database + client process + JVM bridge) | {figures['console_cpu_ms_per_sweep']} ms |
| **share of one core, sampling every {args.interval:g} s** | **{figures['console_core_share_pct']} %** |
| brokers' extra CPU per sweep (JMX, all three together) | {figures['brokers_cpu_ms_per_sweep']} ms ({figures['brokers_core_share_pct']} % of a core) |
| rows stored ({args.sweeps} sweeps: a row per broker and per topic on each broker) | {rows:,} |

Sweeps ran back to back after three warm-up sweeps; CPU from /proc (utime + stime) of each process and its
descendants. The brokers' share is their CPU during the sweeps minus their idle rate over {args.idle:g} s before.
"""
    write_section("broker-sampling", body)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
