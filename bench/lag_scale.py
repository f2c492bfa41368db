"""The lag sweep on a big cluster: N groups with 4 committed partitions each (50,000 groups, 200,000 committed
partitions by default), against `kafka-consumer-groups --describe --all-groups` in the same run.

    .venv/bin/python bench/lag_scale.py [--groups 50000] [--topics 1000] [--sweeps 3] [--describe-timeout 300]

Seeds a fresh broker (bench_stack) with admin offset commits, a bounded number in flight, then runs the sampler's
entry point (offsets.lag.sampler.lag_sample, through the cluster's client process as in production) cold (first
call of the process: the client process and the JVM behind the streams-group listing start) and warm. Reports the
groups and partitions sampled, skipped, the duration split into asking Kafka and storing, and the peak RSS of this
process and of the cluster's client process. Writes bench/RESULTS.md (section lag-scale-<groups>).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    bench_stack, check, commit_as_admin, kafka_tool_ms, machine, parse_args, produce_filler, wait_for_leaders,
    write_section)

GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
SEED_IN_FLIGHT = 500  # admin commits awaited together (one group per request: the client allows no more)
PARTITIONS_PER_TOPIC = 4


def seed(bootstrap: str, groups: int, topics: int, records: int) -> float:
    """`topics` topics of 4 partitions with `records` records each; group g commits on the 4 partitions of topic
    g % topics, at an offset that varies with g so lags differ."""
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    started = time.perf_counter()
    names = [f"lagscale-{i:04d}" for i in range(topics)]
    for start in range(0, topics, 500):
        futures = admin.create_topics([NewTopic(n, PARTITIONS_PER_TOPIC, 1) for n in names[start:start + 500]])
        for future in futures.values():
            try:
                future.result()
            except KafkaException as exc:  # the smoke runs share a broker: groups_list's and lanes' seeds made them
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise
    wait_for_leaders(admin, names)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    produce_filler(producer, names, PARTITIONS_PER_TOPIC, records)
    requests = [ConsumerGroupTopicPartitions(f"lagscale-group-{g:05d}",
                                             [TopicPartition(names[g % topics], p, g % (records + 1))
                                              for p in range(PARTITIONS_PER_TOPIC)])
                for g in range(groups)]
    for start in range(0, groups, SEED_IN_FLIGHT):
        commit_as_admin(admin, requests[start:start + SEED_IN_FLIGHT])
    return time.perf_counter() - started


def child_peak_rss_mib() -> float | None:
    """Peak RSS (VmHWM) of the cluster's Kafka client process the sweep goes through, which holds librdkafka and its
    answers: the cluster's background lane's own process (KAFKA_BACKGROUND_CLIENT_PROCESS on), or the one
    the pages share."""
    from django.conf import settings

    from gateway.kafka import sandbox
    from gateway.kafka.types import BACKGROUND

    lane = BACKGROUND if settings.KAFKA_BACKGROUND_CLIENT_PROCESS else ""
    pid = sandbox.child_pids(lane).get("local")
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def own_peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=50_000)
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--records", type=int, default=20, help="records per partition")
    parser.add_argument("--sweeps", type=int, default=3, help="sweeps in all: the first cold, the others warm")
    parser.add_argument("--describe-timeout", type=float, default=300.0)
    args = parse_args(parser, smoke={"groups": 40, "topics": 4, "sweeps": 2})

    with bench_stack("lag-scale", offsets_partitions=50):
        from django.conf import settings

        from console.clusters.models import Cluster
        from offsets.lag.sampler import lag_sample
        from offsets.models import LagSample

        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        Cluster.objects.update_or_create(name="local", defaults={"bootstrap_servers": bootstrap})
        seed_s = seed(bootstrap, args.groups, args.topics, args.records)
        print(f"seeded {args.groups} groups in {seed_s:.0f} s", flush=True)
        rss_before = own_peak_rss_mib()
        runs = []
        for i in range(args.sweeps):
            started = time.perf_counter()
            # The listing rides along for the groups list's table; held by five runs it would count in the peak.
            result = dataclasses.replace(lag_sample(cluster="local"), listed=None)
            total = time.perf_counter() - started
            asked = result.asked_ms / 1000
            check(result.groups >= args.groups, f"the sweep listed {result.groups} of {args.groups} groups")
            child_rss = child_peak_rss_mib()
            check(child_rss is not None, "the sweep's Kafka client process is not found")
            runs.append((("cold" if i == 0 else "warm"), result, asked, total - asked, total, own_peak_rss_mib(),
                         child_rss))
            print(runs[-1], flush=True)
        stored = LagSample.objects.filter(step=0).count()
        if any(r.skipped == 0 for _, r, *_ in runs):  # a sweep that sampled every group stored a row for each
            with_rows = (LagSample.objects.filter(step=0, group__startswith="lagscale-group-")
                         .values("group").distinct().count())
            check(with_rows >= args.groups, f"raw samples stored for {with_rows} of {args.groups} groups")
        try:
            describe = f"{kafka_tool_ms(GROUP_COMMAND, '--describe', '--all-groups', timeout=args.describe_timeout) / 1000:.1f} s"
        except subprocess.TimeoutExpired:
            describe = f"did not finish within {args.describe_timeout:.0f} s"
        except RuntimeError as exc:
            describe = f"failed: {str(exc).strip().splitlines()[-1][:200]}"
        budget = settings.LAG_SWEEP_BUDGET_S

    committed = args.groups * PARTITIONS_PER_TOPIC
    lines = [
        f"## Lag sweep at {args.groups:,} groups ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`flock /tmp/console-suite.lock .venv/bin/python bench/lag_scale.py --groups {args.groups} "
        f"--topics {args.topics} --records {args.records} --sweeps {args.sweeps} "
        f"--describe-timeout {args.describe_timeout:g}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1), 50 `__consumer_offsets` partitions, SQLite.",
        f"Data: {args.groups:,} groups, each with commits on the 4 partitions of one of {args.topics:,} topics "
        f"({committed:,} committed partitions, {args.topics * PARTITIONS_PER_TOPIC:,} distinct), seeded in "
        f"{seed_s:.0f} s. Sweep budget (LAG_SWEEP_BUDGET_S) {budget:g} s.",
        "",
        "| sweep | groups sampled | skipped | partitions | asking Kafka | storing after it (the rest overlaps the asking) | total | peak RSS (this process / client process) |",
        "|---|---|---|---|---|---|---|---|",
        *[f"| {kind} | {r.groups - r.skipped:,} of {r.groups:,} | {r.skipped:,} | {r.partitions:,} | {asked:.1f} s | "
          f"{store:.1f} s | **{total:.1f} s** | {rss:.0f} MiB / {child:.0f} MiB |"
          for kind, r, asked, store, total, rss, child in runs],
        f"| Kafka `kafka-consumer-groups --describe --all-groups` (JVM start included) | | | | | | {describe} | |",
        "",
        f"This process held {rss_before:.0f} MiB at its peak before the first sweep (Django, the seeding client). "
        f"Raw samples stored: {stored:,} rows (one per group and topic per sweep). Cold is the first sweep of the "
        "process: it starts the cluster's client process and the JVM that lists streams groups. Each gateway call "
        "covers at most 2,000 groups (OffsetFetch through Kafka's Java Admin: one multi-group request per "
        "coordinator) or 20,000 partitions (ListOffsets, in windows of 5,000); samples and statuses are written "
        "1,000 groups a transaction. Storing grows with the sweeps until every group's status window is full "
        "(LAG_STATUS_WINDOW samples).",
    ]
    write_section(f"lag-scale-{args.groups}", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
