"""Memory of the group recorder: one `manage.py record_groups` process recording 1 cluster, then N clusters (a
thread each), against the process per cluster it took before.

    .venv/bin/python bench/recorder_memory.py [--clusters 6] [--commits 20000] [--hold 10]

One broker, registered N times under its own names (each registration is recorded on its own, into its own rows).
`--commits` offset commits are written first, so every recorder has a backlog to read; a run counts once every
cluster has read it to its end (and stored exactly the commits written: the check), then samples the process's
resident memory (VmRSS) once a second for `--hold` seconds and keeps the highest. The process per cluster of the
old design is `record_groups --cluster NAME`, which still runs one cluster in the foreground: its figure times N is
what N clusters cost then. The Kafka client processes the recorder may ask for topic names are per cluster and
host, shared with the console's other processes, and not counted here. Writes bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, bench_stack, check, machine, parse_args, wait_for_leaders, write_section  # noqa: E402

TOPIC = "rmem"
GROUPS = 20
# This run's groups: on a shared broker (the suite's smoke pass) other benches' groups commit too, and a second run
# on the same broker must not count the first one's commits.
GROUP_PREFIX = f"rmem-{uuid.uuid4().hex[:6]}-"


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def seed(bootstrap: str, commits: int) -> None:
    """`commits` offset commits (one partition each) spread over GROUPS groups."""
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result()
    wait_for_leaders(admin, [TOPIC])
    committers = [Consumer({"bootstrap.servers": bootstrap, "group.id": f"{GROUP_PREFIX}{g:02d}",
                            "enable.auto.commit": False})
                  for g in range(GROUPS)]
    for i in range(commits):
        committers[i % GROUPS].commit(offsets=[TopicPartition(TOPIC, 0, 1 + i // GROUPS)], asynchronous=True)
        if i % 200 == 0:
            for consumer in committers:
                consumer.poll(0)
    for consumer in committers:
        consumer.close()  # waits for the outstanding commits


def register(names: list[str]) -> None:
    """The registry holds exactly `names` (the broker under each), and nothing is recorded yet."""
    from console.clusters.models import Cluster
    from offsets.models import ConsumerGroupState, GroupCommitStat, GroupGeneration, RecorderPosition, RecorderStatus

    for model in (Cluster, RecorderStatus, RecorderPosition, GroupCommitStat, GroupGeneration, ConsumerGroupState):
        model.objects.all().delete()
    for name in names:
        Cluster.objects.create(name=name, bootstrap_servers=os.environ["KAFKA_BOOTSTRAP_SERVERS"])


def caught_up(names: list[str]) -> bool:
    from offsets.models import RecorderStatus

    return RecorderStatus.objects.filter(cluster__in=names, state="recording", behind_records=0).count() == len(names)


def measure(command: list[str], names: list[str], commits: int, hold: float) -> dict:
    """Starts the recorder, waits until every cluster is read to its end, then samples its memory for `hold` s."""
    from offsets.models import GroupCommitStat

    register(names)
    started = time.monotonic()
    log = tempfile.TemporaryFile("w+")  # a pipe nobody reads would stall a chatty recorder
    process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 300
        while not caught_up(names):
            if process.poll() is not None:
                log.seek(0)
                check(False, f"the recorder exited with {process.returncode}: {log.read()[-2000:]}")
            check(time.monotonic() < deadline, f"the recorder of {names} did not catch up within 300 s")
            time.sleep(0.5)
        caught_up_s = time.monotonic() - started
        samples = []
        sample_until = time.monotonic() + hold
        while True:
            samples.append(rss_kib(process.pid))
            if time.monotonic() >= sample_until:
                break
            time.sleep(1)
        peak = rss_kib(process.pid, "VmHWM")
        threads = len(os.listdir(f"/proc/{process.pid}/task"))
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
    for name in names:
        stored = sum(GroupCommitStat.objects.filter(cluster=name, group__startswith=GROUP_PREFIX)
                     .values_list("commits", flat=True))
        check(stored == commits, f"cluster {name} stored {stored} commits, {commits} were written")
    return {"rss_mib": max(samples) / 1024, "peak_mib": peak / 1024, "threads": threads, "caught_up_s": caught_up_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=6)
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--hold", type=float, default=10.0)
    args = parse_args(parser, smoke={"clusters": 2, "commits": 200, "hold": 1.0})
    check(args.clusters >= 2, "--clusters must be at least 2 (it is compared with one)")

    with bench_stack("recorder-memory"):
        seed(os.environ["KAFKA_BOOTSTRAP_SERVERS"], args.commits)
        names = [f"rmem-{c:02d}" for c in range(args.clusters)]
        manage = [sys.executable, "manage.py", "record_groups"]
        alone = measure([*manage, "--cluster", names[0]], names[:1], args.commits, args.hold)
        one = measure(manage, names[:1], args.commits, args.hold)
        many = measure(manage, names, args.commits, args.hold)

    per_thread = (many["rss_mib"] - one["rss_mib"]) / (args.clusters - 1)
    before = args.clusters * alone["rss_mib"]
    check(many["threads"] > one["threads"], "recording more clusters started no more threads")
    body = f"""## Group recorder memory, 1 vs {args.clusters} clusters ({datetime.now(UTC):%Y-%m-%d})

`.venv/bin/python bench/recorder_memory.py --clusters {args.clusters} --commits {args.commits} --hold {args.hold:g}`

Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1) registered as up to {args.clusters} clusters, scratch
SQLite database; {args.commits:,} offset commits in `__consumer_offsets`, which every cluster's recorder reads to its
end (and stores exactly: checked) before its memory is sampled once a second for {args.hold:g} s.

| recorder | resident memory (highest sample) | peak (VmHWM) | threads | backlog read in |
|---|---|---|---|---|
| `record_groups --cluster NAME`: one cluster, the process per cluster of before | {alone["rss_mib"]:.0f} MiB | {alone["peak_mib"]:.0f} MiB | {alone["threads"]} | {alone["caught_up_s"]:.1f} s |
| `record_groups`, 1 cluster registered | {one["rss_mib"]:.0f} MiB | {one["peak_mib"]:.0f} MiB | {one["threads"]} | {one["caught_up_s"]:.1f} s |
| `record_groups`, {args.clusters} clusters registered | **{many["rss_mib"]:.0f} MiB** | {many["peak_mib"]:.0f} MiB | {many["threads"]} | {many["caught_up_s"]:.1f} s |

Each cluster beyond the first adds about **{per_thread:.1f} MiB** (its thread, consumer and buffers). {args.clusters}
clusters took {args.clusters} processes before, about {before:,.0f} MiB ({args.clusters} x the first row), against
{many["rss_mib"]:,.0f} MiB now. The times include starting the process (Django and the first connection).
"""
    write_section("recorder-memory", body)
    print(body)


if __name__ == "__main__":
    main()
