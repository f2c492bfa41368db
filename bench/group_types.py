"""The groups page with groups of every type (classic consumer groups, share groups, streams groups), warm,
against Kafka's own `kafka-groups --list` and `kafka-share-groups --describe --all-groups`.

    .venv/bin/python bench/group_types.py [--consumer 250] [--share 150] [--streams 100] [--repeat 10]

Share and streams groups are made by Kafka's own clients (KafkaShareConsumer, KafkaStreams with
group.protocol=streams) run inside one JVM through py4j; each joins, gets its partitions and closes, so every
group ends Empty with offsets (share groups with a lag of the records produced after they joined). Writes bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    bench_client, bench_stack, check, commit_as_admin, kafka_tool_ms, machine, parse_args, summary, timed, tool_runs,
    wait_for_leaders, write_section)

GROUPS_COMMAND = "org.apache.kafka.tools.GroupsCommand"
SHARE_COMMAND = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
TOPIC, OUTPUT = "typesbench", "typesbench-out"


def _properties(jvm, values: dict[str, str]):
    props = jvm.java.util.Properties()
    for key, value in values.items():
        props.put(key, value)
    return props


def _share_group(jvm, bootstrap: str, group: str) -> None:
    consumer = jvm.org.apache.kafka.clients.consumer.KafkaShareConsumer(_properties(jvm, {
        "bootstrap.servers": bootstrap, "group.id": group,
        "key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
        "value.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer"}))
    try:
        # A new share group starts at the log end (share.auto.offset.reset=latest): polling until the group has
        # assigned and initialised its share partitions is enough; records produced afterwards are its lag.
        consumer.subscribe(jvm.java.util.List.of(TOPIC))
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            consumer.poll(jvm.java.time.Duration.ofMillis(500))
    finally:
        consumer.close()


def _streams_group(jvm, bootstrap: str, group: str, state_dir: str) -> None:
    builder = jvm.org.apache.kafka.streams.StreamsBuilder()
    builder.stream(TOPIC).to(OUTPUT)
    serde = "org.apache.kafka.common.serialization.Serdes$ByteArraySerde"
    streams = jvm.org.apache.kafka.streams.KafkaStreams(builder.build(), _properties(jvm, {
        "application.id": group, "bootstrap.servers": bootstrap, "group.protocol": "streams",
        "state.dir": state_dir, "commit.interval.ms": "200", "auto.offset.reset": "earliest",
        "default.key.serde": serde, "default.value.serde": serde}))
    try:
        streams.start()
        deadline = time.monotonic() + 90
        while str(streams.state().toString()) != "RUNNING":
            if time.monotonic() > deadline:
                raise RuntimeError(f"streams group {group} never ran")
            time.sleep(0.2)
        time.sleep(1.5)  # a few commit intervals, so the group has offsets
    finally:
        streams.close()


def seed(bootstrap: str, consumer: int, share: int, streams: int) -> float:
    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    from gateway.kafka.java import bridge

    started = time.perf_counter()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(TOPIC, 3, 1), NewTopic(OUTPUT, 3, 1)]).values():
        future.result()
    wait_for_leaders(admin, [TOPIC, OUTPUT])
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for i in range(300):
        producer.produce(TOPIC, value=b"x" * 100, partition=i % 3)
    producer.flush(60)
    commit_as_admin(admin, [ConsumerGroupTopicPartitions(f"types-consumer-{g:04d}",
                                                         [TopicPartition(TOPIC, p, 50) for p in range(3)])
                            for g in range(consumer)])
    jvm = bridge.jvm()
    state = tempfile.mkdtemp(prefix="bench-streams-")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda g: _share_group(jvm, bootstrap, f"types-share-{g:04d}"), range(share)))
        for i in range(300):
            producer.produce(TOPIC, value=b"y" * 100, partition=i % 3)
        producer.flush(60)
        list(pool.map(lambda g: _streams_group(jvm, bootstrap, f"types-streams-{g:04d}", f"{state}/{g}"),
                      range(streams)))
    shutil.rmtree(state, ignore_errors=True)  # the closed streams' local state
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--consumer", type=int, default=250)
    parser.add_argument("--share", type=int, default=150)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=10)
    args = parse_args(parser, smoke={"consumer": 3, "share": 2, "streams": 2, "repeat": 1})
    total = args.consumer + args.share + args.streams

    with bench_stack("group-types"):
        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        seed_s = seed(bootstrap, args.consumer, args.share, args.streams)
        _, get = bench_client()
        from offsets.selectors import groups_of_every_type

        listed, problem = groups_of_every_type("local")
        kinds = {}
        for g in listed:
            kinds[g.group_type or g.protocol] = kinds.get(g.group_type or g.protocol, 0) + 1
        check(not problem and len(listed) >= total and kinds.get("share", 0) >= args.share
              and kinds.get("streams", 0) >= args.streams, f"listed {kinds} ({sorted(g.group_id for g in listed)}), problem: {problem}")
        get("/clusters/local/groups/")  # warm: the JVM is up and the clients connected
        share_shown, streams_shown = min(7, args.share - 1), min(7, args.streams - 1)
        rows = {
            f"groups page, every type ({total} groups, first page of 100), warm":
                timed(lambda: get("/clusters/local/groups/"), args.repeat),
            "groups page, share groups only (first page of 100), warm":
                timed(lambda: get("/clusters/local/groups/?type=share"), args.repeat),
            "groups page, streams groups only (all of them), warm":
                timed(lambda: get("/clusters/local/groups/?type=streams"), args.repeat),
            "groups page, last page (mixed types), warm":
                timed(lambda: get(f"/clusters/local/groups/?page={(total + 99) // 100}"), args.repeat),
            "one share group page": timed(lambda: get(f"/clusters/local/groups/types-share-{share_shown:04d}/"),
                                          args.repeat),
            "one streams group page": timed(lambda: get(f"/clusters/local/groups/types-streams-{streams_shown:04d}/"),
                                            args.repeat),
        }
        kafka_list = timed(lambda: kafka_tool_ms(GROUPS_COMMAND, "--list"), tool_runs())
        kafka_share = timed(lambda: kafka_tool_ms(SHARE_COMMAND, "--describe", "--all-groups"), tool_runs())

    listed_kinds = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    lines = [
        f"## Groups of every type ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/group_types.py --consumer {args.consumer} --share {args.share} "
        f"--streams {args.streams} --repeat {args.repeat}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1).",
        f"Data: {total} groups listed as {listed_kinds}; consumer groups with commits on a 3-partition topic, share "
        f"and streams groups made by KafkaShareConsumer and KafkaStreams (group.protocol=streams) that read it and "
        f"closed (seeded in {seed_s:.0f} s).",
        "",
        "| what | time |",
        "|---|---|",
        *[f"| console: {name} | {summary(samples)} |" for name, samples in rows.items()],
        f"| Kafka `kafka-groups --list` (JVM start included) | {summary(kafka_list)} |",
        f"| Kafka `kafka-share-groups --describe --all-groups` (JVM start included) | {summary(kafka_share)} |",
        "",
        "A page lists every group with one ListGroups from librdkafka and one ListGroups of every type from Kafka's "
        "Java Admin client (kept warm in one JVM through py4j), then describes only the groups shown: one "
        "DescribeGroups and OffsetFetch round for the consumer groups, one ShareGroupDescribe and one start-offsets "
        "request for the share groups, one StreamsGroupDescribe and one offsets request for the streams groups, and "
        "one ListOffsets round for the partitions they committed.",
    ]
    write_section("group-types", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
