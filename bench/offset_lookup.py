"""Log end and last stable offsets of many partitions, and what a big lookup costs a small call made beside it.

    flock /tmp/console-suite.lock .venv/bin/python bench/offset_lookup.py [--topics 2500] [--repeat 5]

Starts a fresh broker, creates `--topics` topics x 4 partitions with a record on each, then in this one process
(as the cluster's client process serves every page and worker of a host) times the gateway's
list_offsets_many(every partition, [latest, stable]):
- through the Admin client (AdminClient.list_offsets, a future per partition), as every call went before;
- through gateway/kafka/librdkafka/offset_lookup.py (a consumer's offsets_for_times, one C call per window);
and, while each runs on a thread, how long a four-partition list_offsets (a topic page's) takes on another,
one after the other until the big call ends. Writes bench/RESULTS.md (section offset-lookup).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    bench_stack, check, machine, parse_args, produce_filler, summary, write_section)

PARTITIONS = 4


def seed(bootstrap: str, topics: int) -> list[str]:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    names = [f"lookup-{i:05d}" for i in range(topics)]
    for start in range(0, topics, 250):
        for future in admin.create_topics([NewTopic(n, PARTITIONS, 1) for n in names[start:start + 250]],
                                          operation_timeout=120).values():
            future.result()
    # CreateTopics answers once the controller has the topics; the broker takes seconds more to know 10,000
    # partitions, and a client that asks before then remembers "unknown topic" for minutes.
    deadline = time.monotonic() + 120
    while len([t for t in admin.list_topics(timeout=30).topics if t.startswith("lookup-")]) < topics:
        if time.monotonic() > deadline:
            raise TimeoutError("the broker did not list every topic within 120 s")
        time.sleep(2)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "log_level": 0})
    produce_filler(producer, names, PARTITIONS, 1)
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=2500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parse_args(parser, smoke={"topics": 5, "repeat": 1})

    with bench_stack("offset-lookup"):
        from console.clusters.selectors import cluster_connection, cluster_get
        from gateway.kafka.admin import KafkaAdmin
        from gateway.kafka.librdkafka import offset_lookup
        from gateway.kafka.types import LATEST, STABLE, PartitionRef

        names = seed(os.environ["KAFKA_BOOTSTRAP_SERVERS"], args.topics)
        admin = KafkaAdmin(cluster_connection(cluster_get("local")), timeout=30, unreachable_backoff=5)
        refs = [PartitionRef(n, p) for n in names for p in range(PARTITIONS)]
        small = [PartitionRef(names[0], p) for p in range(PARTITIONS)]
        deadline = time.monotonic() + 120
        while True:  # every partition led and answering
            try:
                answers = admin.list_offsets_many(refs, [LATEST, STABLE])
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(2)
        expected = {at: {ref: o.offset for ref, o in found.items()} for at, found in answers.items()}
        check(set(expected[LATEST].values()) == {1} and len(expected[LATEST]) == len(refs),
              f"log ends of {len(expected[LATEST])} of {len(refs)} partitions, one record on each")

        def big_call(threshold: int) -> float:
            offset_lookup.LOOKUP_MIN_PARTITIONS = threshold
            started = time.perf_counter()
            found = admin.list_offsets_many(refs, [LATEST, STABLE])
            took = (time.perf_counter() - started) * 1000
            check({at: {ref: o.offset for ref, o in f.items()} for at, f in found.items()} == expected,
                  "the two paths gave different offsets")
            return took

        # A smoke run's few partitions take the consumer lookup too (at full size its threshold is 1,000).
        paths = {"Admin client (a future per partition)": 10 ** 9,
                 "consumer lookup (offsets_for_times)": min(1000, len(refs))}
        alone: dict[str, list[float]] = {}
        beside: dict[str, list[float]] = {}
        for label, threshold in paths.items():
            alone[label] = [big_call(threshold) for _ in range(args.repeat)]
            beside[label] = []
            for _ in range(args.repeat):
                thread = threading.Thread(target=big_call, args=(threshold,))
                thread.start()
                while thread.is_alive():
                    started = time.perf_counter()
                    admin.list_offsets(small, LATEST)
                    beside[label].append((time.perf_counter() - started) * 1000)
                thread.join()

    old, new = paths
    ratio = statistics.median(alone[old]) / statistics.median(alone[new])
    small_ratio = statistics.median(beside[old]) / statistics.median(beside[new])
    lines = [
        f"## Offsets of every partition, and a small call beside them ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`flock /tmp/console-suite.lock .venv/bin/python bench/offset_lookup.py --topics {args.topics} "
        f"--repeat {args.repeat}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1); everything in one Python process.",
        f"Data: {args.topics:,} topics × {PARTITIONS} = {len(refs):,} partitions, one record on each.",
        "",
        "| path | list_offsets_many(every partition, [latest, stable]) | a 4-partition list_offsets meanwhile |",
        "|---|---|---|",
        *[f"| {label} | {summary(alone[label])} | {summary(beside[label])} |" for label in paths],
        "",
        f"The consumer lookup is {ratio:.1f}× as fast alone, and a small call beside it {small_ratio:.0f}× as fast "
        "(the Admin client's path holds the GIL while it makes a future and a result per partition). Both paths "
        "gave the same offsets.",
    ]
    write_section("offset-lookup", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
