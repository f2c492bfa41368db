"""Topic list speed with many topics, against Kafka's own `kafka-topics` on the same data.

    .venv/bin/python bench/topics.py [--topics 2000] [--partitions 3] [--repeat 15]

Starts a fresh broker (or uses KAFKA_BOOTSTRAP_SERVERS) and a throwaway Redis, creates the topics, times the
rebuild of the shared topic table (what beat runs), the topic list page and searches through Django's test client
(cold: a process that has not decoded the table yet; warm: it has), times TopicCommand from the fetched jars, and
writes the figures to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    bench_client, bench_stack, check, kafka_tool_ms, machine, parse_args, summary, timed, tool_runs, write_section)

TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
REBUILD_REMEMBERED = ("rebuild of the shared table, log starts remembered (what beat runs: Metadata, topic ids, "
                      "every log end, the log starts of this rebuild's share of topics)")
REBUILD_FROM_NOTHING = "rebuild of the shared table, nothing remembered (every log start asked too)"


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
    args = parse_args(parser, smoke={"topics": 20, "partitions": 2, "repeat": 2})

    from devstack.kafka import free_port
    from devstack.redis import RedisNode

    redis_node = RedisNode(home=Path(tempfile.mkdtemp(prefix="bench-topics-redis-")), port=free_port())
    redis_node.start()
    os.environ["REDIS_URL"] = redis_node.url
    try:
        with bench_stack("topics"):
            from django.core.cache import cache

            bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
            creation_s = create_topics(bootstrap, args.topics, args.partitions)
            _, get = bench_client()

            list_url = "/clusters/local/topics/"
            search_url = "/clusters/local/topics/?q=bench-001&page=2"  # bench-00100..bench-00199: 100 topics
            regex_url = "/clusters/local/topics/?q=%5Ebench-0%5B0-4%5D.*7%24&regex=1"
            import redis

            from topics import log_starts, table
            from topics.selectors import topic_snapshot_refresh

            # Untimed: the broker materialises partition logs for a while after a mass creation; wait until three
            # rebuilds in a row are complete (every partition has a leader and answered), at most 5 minutes.
            settle_started, complete_in_a_row = time.perf_counter(), 0
            while complete_in_a_row < 3 and time.perf_counter() - settle_started < 300:
                snapshot = topic_snapshot_refresh("local", wait_s=60)
                complete_in_a_row = complete_in_a_row + 1 if snapshot.complete else 0
                time.sleep(1)
            settle_s = time.perf_counter() - settle_started
            made = [row for row in snapshot.rows if re.fullmatch(r"bench-\d{5}", row.name)]
            check(len(made) == args.topics and all(row.partitions == args.partitions for row in made),
                  f"the shared table holds {len(made)} of the {args.topics} topics made")
            blob = redis.Redis.from_url(redis_node.url).get("console:topics:snapshot:local")

            def cold():  # a web process that has not read the table yet: it is in Redis, not decoded here
                table.forget_redis_state()
                cache.clear()

            def no_table():
                table.wait_for_refresh("local")
                table.invalidate("local")

            rebuilds = max(5, args.repeat // 2)
            rows = {
                REBUILD_REMEMBERED: timed(lambda: topic_snapshot_refresh("local", wait_s=60), rebuilds),
                REBUILD_FROM_NOTHING: timed(lambda: topic_snapshot_refresh("local", wait_s=60), rebuilds,
                                            before=lambda: log_starts.forget("local")),
                "list page, cold (table in Redis, not yet decoded by this process)":
                    timed(lambda: get(list_url), args.repeat, before=cold),
                "list page, warm": timed(lambda: get(list_url), args.repeat),
                "list page, no table yet (answers \"being built\", starts the rebuild in the background)":
                    timed(lambda: get(list_url), args.repeat, before=no_table),
            }
            table.wait_for_refresh("local")
            topic_snapshot_refresh("local", wait_s=60)
            rows.update({
                "substring search (page 2), cold": timed(lambda: get(search_url), args.repeat, before=cold),
                "substring search (page 2), warm": timed(lambda: get(search_url), args.repeat),
                "regex search, warm": timed(lambda: get(regex_url), args.repeat),
            })
            describe = timed(lambda: kafka_tool_ms(TOPIC_COMMAND, "--describe"), tool_runs())
            listing = timed(lambda: kafka_tool_ms(TOPIC_COMMAND, "--list"), tool_runs())
    finally:
        redis_node.stop()
        shutil.rmtree(redis_node.home, ignore_errors=True)

    partitions = args.topics * args.partitions
    lines = [
        f"## Topics ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/topics.py --topics {args.topics} --partitions {args.partitions} --repeat {args.repeat}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1), a local Redis.",
        f"Data: {args.topics} topics × {args.partitions} partitions = {partitions} partitions "
        f"(created in {creation_s:.1f} s; every partition had a leader {settle_s:.0f} s later, and timing started then). "
        f"The shared table in Redis: {len(blob or b'') / 1024:.0f} KiB (zlib-compressed JSON).",
        "",
        "| what | time |",
        "|---|---|",
        *[f"| console: {name} | {summary(samples)} |" for name, samples in rows.items()],
        f"| Kafka `kafka-topics --describe` (TopicCommand, JVM start included) | {summary(describe)} |",
        f"| Kafka `kafka-topics --list` (TopicCommand, JVM start included) | {summary(listing)} |",
        "",
        f"List page warm / `kafka-topics --list`: {_ratio(rows['list page, warm'], listing)}; cold / `--list`: "
        f"{_ratio(rows['list page, cold (table in Redis, not yet decoded by this process)'], listing)}. "
        f"Rebuild with log starts remembered / with none: "
        f"{_ratio(rows[REBUILD_REMEMBERED], rows[REBUILD_FROM_NOTHING])}.",
        "",
        "Pages never ask Kafka for all partitions: they read the one table per cluster that beat rebuilds "
        "(topics/table.py) and ask only for the configs of the 50 topics shown (one DescribeConfigs). Cold = a "
        "process that has not decoded the current table yet (it reads and decompresses the blob from Redis); "
        "warm = it has (one small Redis round trip to see that the table did not change).",
    ]
    default_size = (args.topics, args.partitions) == (2000, 3)
    write_section("topics" if default_size else f"topics-{args.topics}x{args.partitions}", "\n".join(lines))
    print("\n".join(lines))


def _ratio(console_ms: list[float], tool_ms: list[float]) -> str:
    import statistics

    return f"{statistics.median(console_ms) / statistics.median(tool_ms):.3f} (medians)"


if __name__ == "__main__":
    main()
