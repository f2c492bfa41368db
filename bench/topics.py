"""Topic list speed with many topics, against Kafka's own `kafka-topics --describe` on the same data.

    .venv/bin/python bench/topics.py [--topics 2000] [--partitions 3] [--repeat 15]

Starts a fresh broker (or uses KAFKA_BOOTSTRAP_SERVERS), creates the topics, times the topic list page and a
search through Django's test client (cold: cache cleared before each request; warm: cached), times TopicCommand
from the fetched jars, and writes the figures to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    bench_client, bench_stack, kafka_tool_ms, machine, summary, timed, write_section)

TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"


def create_topics(bootstrap: str, count: int, partitions: int) -> float:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    started = time.perf_counter()
    names = [f"bench-{i:05d}" for i in range(count)]
    for i in range(0, count, 250):
        futures = admin.create_topics([NewTopic(n, partitions, 1) for n in names[i:i + 250]], operation_timeout=120)
        for future in futures.values():
            future.result()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()

    with bench_stack("topics"):
        import os

        from django.core.cache import cache

        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        creation_s = create_topics(bootstrap, args.topics, args.partitions)
        _, get = bench_client()

        list_url = "/clusters/local/topics/"
        search_url = "/clusters/local/topics/?q=bench-001&page=2"  # bench-00100..bench-00199: 100 topics
        regex_url = "/clusters/local/topics/?q=%5Ebench-0%5B0-4%5D.*7%24&regex=1"
        from django.conf import settings

        from topics import table
        from topics.selectors import topic_table, topic_table_invalidate

        # Untimed: the broker materialises partition logs for a while after a mass creation; wait until three
        # answers in a row are complete (every partition has a leader and answered), at most 5 minutes.
        settle_started, complete_in_a_row = time.perf_counter(), 0
        while complete_in_a_row < 3 and time.perf_counter() - settle_started < 300:
            topic_table_invalidate("local")
            complete = not any(r.messages is None for r in topic_table("local"))
            complete_in_a_row = complete_in_a_row + 1 if complete else 0
            time.sleep(1)
        settle_s = time.perf_counter() - settle_started
        incomplete: list[int] = []

        def cold():
            topic_table_invalidate("local")
            cache.clear()

        def stale():
            table.wait_for_refresh("local")
            settings.TOPIC_LIST_CACHE_S = 0  # every request finds the snapshot stale and starts a rebuild

        def count_incomplete():
            incomplete.append(sum(r.messages is None for r in topic_table("local")))
        rows = {
            "list page, cold cache": timed(lambda: (get(list_url), count_incomplete()), args.repeat, before=cold),
            "list page, warm cache": timed(lambda: get(list_url), args.repeat),
            "list page, snapshot stale (served at once, rebuilt in the background)":
                timed(lambda: get(list_url), args.repeat, before=stale),
        }
        table.wait_for_refresh("local")
        settings.TOPIC_LIST_CACHE_S = 15
        rows.update({
            "substring search (page 2), cold": timed(lambda: get(search_url), args.repeat, before=cold),
            "substring search (page 2), warm": timed(lambda: get(search_url), args.repeat),
            "regex search, warm": timed(lambda: get(regex_url), args.repeat),
        })
        describe = timed(lambda: kafka_tool_ms(TOPIC_COMMAND, "--describe"), 3)
        listing = timed(lambda: kafka_tool_ms(TOPIC_COMMAND, "--list"), 3)

    partitions = args.topics * args.partitions
    lines = [
        f"## Topics ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/topics.py --topics {args.topics} --partitions {args.partitions} --repeat {args.repeat}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1).",
        f"Data: {args.topics} topics × {args.partitions} partitions = {partitions} partitions "
        f"(created in {creation_s:.1f} s; every partition had a leader {settle_s:.0f} s later, and timing started then).",
        f"Cold list requests whose answer was incomplete (some partitions' offsets missing, shown as ?): "
        f"{sum(1 for n in incomplete if n)} of {len(incomplete)}.",
        "",
        "| what | time |",
        "|---|---|",
        *[f"| console: {name} | {summary(samples)} |" for name, samples in rows.items()],
        f"| Kafka `kafka-topics --describe` (TopicCommand, JVM start included) | {summary(describe)} |",
        f"| Kafka `kafka-topics --list` (TopicCommand, JVM start included) | {summary(listing)} |",
        "",
        "Cold = no snapshot of the topic table (a process's first request, or the first after a change made through "
        "the console): one Metadata request and two ListOffsets rounds for all partitions, then one DescribeConfigs "
        "round for the 50 topics shown. Warm = snapshot younger than 15 s, plus the DescribeConfigs round. Stale = "
        "snapshot older than that: served at once while one background thread rebuilds it (topics/table.py); "
        "this is what users see in steady state.",
    ]
    default_size = (args.topics, args.partitions) == (2000, 3)
    write_section("topics" if default_size else f"topics-{args.topics}x{args.partitions}", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
