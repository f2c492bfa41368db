"""Transactions: the console's transactions page and `find-hanging` against Kafka's own TransactionsCommand on
the same broker state.

    .venv/bin/python bench/transactions.py [--ids 200] [--partitions 3] [--repeat 15]

Creates `--ids` transactional ids (a third of them with a transaction left open over a topic of `--partitions`
partitions), then times the page (every id, described in one batch), `manage transactions list` in-process,
`find-hanging` over the topic, and the tool's `list`, one tool `describe` (the tool describes one id per run)
and its `find-hanging`, JVM start included: that is what an on-call engineer runs instead.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    bench_client, bench_stack, check, kafka_tool_ms, machine, parse_args, summary, timed, tool_runs, wait_for_leaders,
    write_section)

TOOL = "org.apache.kafka.tools.TransactionsCommand"


def seed(bootstrap: str, ids: int, partitions: int) -> list:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("tbench", partitions, 1)])["tbench"].result()
    wait_for_leaders(admin, ["tbench"])
    open_producers = []
    for i in range(ids):
        producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"tbench-{i:04d}",
                             "transaction.timeout.ms": 900_000})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce("tbench", value=b"x", partition=i % partitions)
        producer.flush(30)
        if i % 3 == 0:
            open_producers.append(producer)  # left open for the whole run
        else:
            producer.commit_transaction(30)
    return open_producers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ids", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=15)
    args = parse_args(parser, smoke={"ids": 6, "repeat": 2})
    with bench_stack("transactions"):
        import os

        from django.core.management import call_command

        from console.clusters.selectors import cluster_admin
        from gateway.kafka.types import PartitionRef
        from transactions.selectors import find_hanging, open_transactions

        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        started = time.perf_counter()
        open_producers = seed(bootstrap, args.ids, args.partitions)
        seeded_s = time.perf_counter() - started
        _, get = bench_client()
        # The JVM starts once per client process; measured warm below.
        shown = get("/clusters/local/transactions/").content.decode()
        check(all(f"tbench-{i:04d}" in shown for i in range(args.ids)), "the page leaves out transactional ids")
        # Every transaction left open is seen open, and none hangs: their coordinator still tracks each.
        refs = [PartitionRef("tbench", p) for p in range(args.partitions)]
        still_open = open_transactions(cluster_admin("local").describe_producers(refs), max_timeout_ms=0,
                                       at_ms=int(time.time() * 1000))
        hanging_now = find_hanging("local", topic="tbench", max_timeout_minutes=0)
        check(len(still_open) == len(open_producers) and not hanging_now,
              f"{len(still_open)} transactions seen open of {len(open_producers)} left open, {len(hanging_now)} "
              "hanging")
        page = timed(lambda: get("/clusters/local/transactions/"), args.repeat)
        listed = timed(lambda: call_command("transactions", "list", stdout=open(os.devnull, "w")), args.repeat)
        hanging = timed(lambda: find_hanging("local", topic="tbench", max_timeout_minutes=0), args.repeat)
        runs = tool_runs(max(3, args.repeat // 5))
        tool_list = [kafka_tool_ms(TOOL, "list") for _ in range(runs)]
        tool_describe = [kafka_tool_ms(TOOL, "describe", "--transactional-id", "tbench-0000") for _ in range(runs)]
        tool_hanging = [kafka_tool_ms(TOOL, "find-hanging", "--topic", "tbench", "--max-transaction-timeout", "0")
                        for _ in range(runs)]
        for producer in open_producers:
            producer.abort_transaction(30)

    import statistics

    ratio = statistics.median(tool_list) / statistics.median(page)
    lines = [
        f"## Transactions ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/transactions.py --ids {args.ids} --partitions {args.partitions} "
        f"--repeat {args.repeat}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1). {args.ids} transactional ids "
        f"({len(open_producers)} with a transaction left open) on a topic of {args.partitions} partitions "
        f"(seeded in {seeded_s:.1f} s).",
        "",
        "| what | time |",
        "|---|---|",
        f"| console: transactions page (list + one batched describe of all {args.ids} ids), warm | {summary(page)} |",
        f"| console: `manage transactions list` (in-process), warm | {summary(listed)} |",
        f"| console: find-hanging over the topic, warm | {summary(hanging)} |",
        f"| Kafka `kafka-transactions list` (JVM start included) | {summary(tool_list)} |",
        f"| Kafka `kafka-transactions describe` of one id (JVM start included) | {summary(tool_describe)} |",
        f"| Kafka `kafka-transactions find-hanging --topic` (JVM start included) | {summary(tool_hanging)} |",
        "",
        f"The page shows every id with its description in {1 / ratio:.2f}× the time the tool takes to list them "
        f"without descriptions; the tool needs one run per id to describe them ({args.ids} runs). The console's "
        "Java Admin client is started once per client process (its first call, not shown, pays the JVM start).",
    ]
    write_section("transactions", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
