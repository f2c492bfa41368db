"""Search throughput: the console's topic search against a plain confluent-kafka consumer running the same value
filter in Python over the same range, in one run; and a page's latency while a search runs.

    .venv/bin/python bench/search.py [--records 1000000] [--size 200] [--partitions 4]

The search goes through the gateway the pages and the shell use (the cluster's client process, in steps of 2 s
as `manage.py messages search` takes them); both sides must find the same records. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    bench_client, bench_stack, check, machine, parse_args, wait_for_leaders, write_section)

NEEDLE = b"needle-7f3a"


def produce(bootstrap: str, topic: str, records: int, size: int, partitions: int) -> float:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()
    wait_for_leaders(admin, [topic])
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000,
                         "queue.buffering.max.messages": 2_000_000, "compression.type": "lz4"})
    filler = (b"order shipped to warehouse; amount 12.50 EUR; " * 10)[:size]
    started = time.perf_counter()
    for i in range(records):
        value = (NEEDLE + filler)[:size] if i % 997 == 0 else filler
        while True:
            try:
                producer.produce(topic, key=str(i).encode(), value=value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush(300)
    return time.perf_counter() - started


def plain_search(bootstrap: str, topic: str, ranges: dict[int, tuple[int, int]]) -> tuple[float, set]:
    """What a person would write: assign, consume in batches, keep the values that contain the needle."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-plain-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "fetch.max.bytes": 52_428_800,
                         "queued.max.messages.kbytes": 65536})
    consumer.assign([TopicPartition(topic, p, s) for p, (s, _) in ranges.items()])
    remaining = {p: e - s for p, (s, e) in ranges.items()}
    found = set()
    started = time.perf_counter()
    while any(remaining.values()):
        for message in consumer.consume(10_000, timeout=1.0):
            if message.error() is None and remaining.get(message.partition(), 0) > 0:
                remaining[message.partition()] -= 1
                value = message.value()
                if value is not None and NEEDLE in value:
                    found.add((message.partition(), message.offset()))
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed, found


def console_search(topic: str) -> tuple[float, set, object]:
    from gateway.kafka.types import ScanFilter
    from records.search import SearchSpec, search_begin, search_step

    spec = SearchSpec(topic=topic, filter=ScanFilter(value_contains=NEEDLE.decode()), max_matches=100_000,
                      max_seconds=3600)
    state = search_begin("local", spec)
    found = set()
    started = time.perf_counter()
    while not state.done:
        state, matches = search_step(state, step_s=2.0)
        found.update((m.record.partition, m.record.offset) for m in matches)
    return time.perf_counter() - started, found, state


def page_latency(get, url: str, rounds: int = 15) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        get(url)
        times.append((time.perf_counter() - started) * 1000)
        time.sleep(0.05)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=4)
    args = parse_args(parser, smoke={"records": 2000})
    with bench_stack("search"):
        from console.clusters.services import cluster_seed_local

        cluster_seed_local()
        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        topic = f"search-bench-{uuid.uuid4().hex[:8]}"
        produce_s = produce(bootstrap, topic, args.records, args.size, args.partitions)
        per = args.records // args.partitions
        ranges = {p: (0, per + (1 if p < args.records % args.partitions else 0)) for p in range(args.partitions)}
        console_search(topic)  # warms the client process, as a running console has it
        plain_s, plain_found = plain_search(bootstrap, topic, ranges)
        console_s, console_found, state = console_search(topic)
        needles = (args.records - 1) // 997 + 1  # produce() put the needle in every 997th record
        check(console_found == plain_found and len(plain_found) == needles and state.scanned == args.records,
              f"the searches disagree: console {len(console_found)} matches in {state.scanned} records, plain "
              f"{len(plain_found)}, {needles} produced")
        _, get = bench_client()
        page = f"/clusters/local/topics/{topic}/"
        idle_ms = page_latency(get, page)
        during: dict = {}
        runner = threading.Thread(target=lambda: during.update(result=console_search(topic)))
        runner.start()
        time.sleep(0.5)
        busy_ms = page_latency(get, page)
        runner.join()
        check(during.get("result", (None, None))[1] == console_found, "the search beside the pages found other records")
    n = args.records
    figures = {"records": n, "size": args.size, "partitions": args.partitions, "matches": len(console_found),
               "console_records_per_s": round(n / console_s), "plain_records_per_s": round(n / plain_s),
               "ratio": round(plain_s / console_s, 3), "topic_page_ms_idle": round(idle_ms, 1),
               "topic_page_ms_during_search": round(busy_ms, 1)}
    lines = [
        f"## Search ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/search.py --records {n} --size {args.size} --partitions {args.partitions}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker. {n:,} records of {args.size} bytes in {args.partitions} "
        f"partitions (produced in {produce_s:.1f} s); a value substring that {len(console_found):,} records "
        "contain. Both sides read the same offsets read_committed and found the same records.",
        "",
        "| what | records/s | time |",
        "|---|---|---|",
        f"| console search (client process, steps of 2 s, as `manage.py messages search`) | "
        f"{figures['console_records_per_s']:,} | {console_s:.2f} s |",
        f"| plain confluent-kafka consumer, same filter in Python | {figures['plain_records_per_s']:,} | "
        f"{plain_s:.2f} s |",
        "",
        f"Console / plain: {figures['ratio']:.2f}. A topic page (median of 15) took {idle_ms:.0f} ms idle and "
        f"{busy_ms:.0f} ms while a search of the same topic ran.",
    ]
    write_section("search", "\n".join(lines))
    print("\n".join(lines))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
