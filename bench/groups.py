"""Consumer group pages with many groups, against `kafka-consumer-groups --describe --all-groups`, and a reset
over 1,000 partitions.

    .venv/bin/python bench/groups.py [--groups 300] [--topics 20] [--partitions 10] [--repeat 10]

Each group commits offsets on 3 of the topics; a separate group commits on all partitions of a 1,000-partition
topic for the reset figures. Writes bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    bench_client, bench_stack, check, commit_as_admin, kafka_tool_ms, machine, parse_args, summary, timed, tool_runs,
    wait_for_leaders, write_section)

GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


def seed(bootstrap: str, groups: int, topics: int, partitions: int, big_partitions: int) -> float:
    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    started = time.perf_counter()
    names = [f"gbench-{i:03d}" for i in range(topics)]
    futures = admin.create_topics([NewTopic(n, partitions, 1) for n in names] + [NewTopic("gbench-big", big_partitions, 1)])
    for future in futures.values():
        future.result()
    wait_for_leaders(admin, [*names, "gbench-big"])
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for name in names:
        for p in range(partitions):
            for _ in range(10):
                producer.produce(name, value=b"x" * 100, partition=p)
    for p in range(big_partitions):
        for _ in range(5):
            producer.produce("gbench-big", value=b"x" * 100, partition=p)
    producer.flush(120)
    requests = []
    for g in range(groups):
        chosen = [names[(g + k) % topics] for k in range(3)]
        requests.append(ConsumerGroupTopicPartitions(
            f"gbench-group-{g:04d}", [TopicPartition(t, p, 3) for t in chosen for p in range(partitions)]))
    requests.append(ConsumerGroupTopicPartitions("gbench-big-group",
                                                 [TopicPartition("gbench-big", p, 4) for p in range(big_partitions)]))
    commit_as_admin(admin, requests)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=300)
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--big-partitions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=10)
    args = parse_args(parser, smoke={"groups": 4, "topics": 3, "partitions": 2, "big_partitions": 10, "repeat": 1})

    with bench_stack("groups"):

        from console.audit.actor import Actor
        from offsets.resets.planning import ALL_TOPICS, ShiftBy
        from offsets.resets.preview import reset_preview
        from offsets.resets.services import group_offsets_reset

        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        seed_s = seed(bootstrap, args.groups, args.topics, args.partitions, args.big_partitions)
        user, get = bench_client()

        from offsets.lag.sampler import lag_sample

        from offsets.selectors import group_snapshot_refresh

        sweeps = timed(lambda: lag_sample(cluster="local"), args.repeat)  # also gives every group a status
        from offsets.models import GroupLagStatus

        swept = GroupLagStatus.objects.filter(cluster="local", group__startswith="gbench-").count()
        check(swept == args.groups + 1, f"the lag sweep stored a status for {swept} of {args.groups + 1} groups")
        group_snapshot_refresh("local", wait_s=60)  # what the sweep's task does after each sweep
        get("/clusters/local/groups/")
        rows = {
            f"lag sample sweep ({args.groups + 1} groups, ListGroups + OffsetFetch + ListOffsets + store)": sweeps,
            f"groups page ({args.groups + 1} groups, first page of 100)": timed(lambda: get("/clusters/local/groups/"), args.repeat),
            "one group page": timed(lambda: get(f"/clusters/local/groups/gbench-group-{min(7, args.groups - 1):04d}/"),
                                    args.repeat),
            "one group page (1,000 partitions)": timed(lambda: get("/clusters/local/groups/gbench-big-group/"),
                                                       args.repeat),
        }
        actor = Actor(user=user, source="cli")
        shift = iter([1, -1] * args.repeat)
        rows[f"reset preview, {args.big_partitions} partitions (shift-by)"] = timed(
            lambda: reset_preview("local", "gbench-big-group", ALL_TOPICS, ShiftBy(1)), args.repeat)
        rows[f"reset execute, {args.big_partitions} partitions (plan, commit, read back, audit)"] = timed(
            lambda: group_offsets_reset(actor=actor, cluster="local", group="gbench-big-group", scope=ALL_TOPICS,
                                        strategy=ShiftBy(next(shift)), reason="bench", confirm="gbench-big-group"),
            args.repeat)
        describe = timed(lambda: kafka_tool_ms(GROUP_COMMAND, "--describe", "--all-groups"), tool_runs())

    lines = [
        f"## Consumer groups ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/groups.py --groups {args.groups} --topics {args.topics} "
        f"--partitions {args.partitions} --repeat {args.repeat}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1).",
        f"Data: {args.groups} groups, each with commits on 3 of {args.topics} topics × {args.partitions} partitions "
        f"({3 * args.partitions} partitions per group), plus one group on a {args.big_partitions}-partition topic "
        f"(seeded in {seed_s:.0f} s).",
        "",
        "| what | time |",
        "|---|---|",
        *[f"| console: {name} | {summary(samples)} |" for name, samples in rows.items()],
        f"| Kafka `kafka-consumer-groups --describe --all-groups` (JVM start included) | {summary(describe)} |",
        "",
        "The groups page filters and orders the cluster's shared list (offsets/group_table.py: every group of every "
        "type with its last lag status, rebuilt by the lag sweep's task after each sweep), then for the page shown "
        "(100 groups) makes one DescribeGroups beside one OffsetFetch per group (the client takes one group per "
        "request; all are sent before any is awaited) and one ListOffsets round for every committed partition. "
        "The lag sweep (what Celery beat runs every 30 s) makes the same calls without DescribeGroups and stores "
        "one row per group and topic plus each group's status. bench/groups_list.py measures the list at 50,000 "
        "groups.",
    ]
    write_section("groups" if args.groups == 300 else f"groups-{args.groups}", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
