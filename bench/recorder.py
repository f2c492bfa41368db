"""The group recorder on a backlog of offset commits in `__consumer_offsets`: decode-and-store rate against the
raw consume rate of the same partitions, and the decode rate alone.

    .venv/bin/python bench/recorder.py [--commits 100000] [--groups 40] [--partitions 10] [--repeat 5]

A fresh broker with 10 `__consumer_offsets` partitions; `--groups` groups commit offsets for `--partitions`
partitions per request until the topic holds at least `--commits` offset commit records; a few classic and
consumer-protocol consumers also join and leave so group metadata records are mixed in. Writes bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import bench_stack, check, machine, parse_args, wait_for_leaders, write_section  # noqa: E402

OFFSETS_TOPIC = "__consumer_offsets"


def seed(bootstrap: str, commits: int, groups: int, partitions: int, members: int) -> tuple[int, float]:
    """Offset commits until the internal topic holds `commits` records; returns (records in it, seconds)."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    started = time.perf_counter()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("rbench", partitions, 1)])["rbench"].result()
    wait_for_leaders(admin, ["rbench"])
    producer = Producer({"bootstrap.servers": bootstrap})
    for p in range(partitions):
        producer.produce("rbench", value=b"x", partition=p)
    producer.flush(30)
    for protocol in ("classic", "consumer"):  # some group metadata records among the commits
        for _ in range(members):
            member = Consumer({"bootstrap.servers": bootstrap, "group.id": f"rbench-live-{protocol}",
                               "group.protocol": protocol, "enable.auto.commit": False})
            member.subscribe(["rbench"])
            deadline = time.monotonic() + 15
            while not member.assignment() and time.monotonic() < deadline:
                member.poll(0.2)
            member.close()
    committers = [Consumer({"bootstrap.servers": bootstrap, "group.id": f"rbench-{g:03d}", "enable.auto.commit": False})
                  for g in range(groups)]
    requests = commits // partitions + 1
    for i in range(requests):
        consumer = committers[i % groups]
        consumer.commit(offsets=[TopicPartition("rbench", p, 1 + i // groups) for p in range(partitions)],
                        asynchronous=True)
        if i % 200 == 0:  # serve the commit responses as they come back
            for c in committers:
                c.poll(0)
    for c in committers:
        c.close()
    total = sum(end for end in end_offsets(bootstrap).values())
    return total, time.perf_counter() - started


def end_offsets(bootstrap: str) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex}"})
    metadata = consumer.list_topics(OFFSETS_TOPIC, timeout=10)
    ends = {p: consumer.get_watermark_offsets(TopicPartition(OFFSETS_TOPIC, p), timeout=10)[1]
            for p in metadata.topics[OFFSETS_TOPIC].partitions}
    consumer.close()
    return ends


def raw_consume(bootstrap: str) -> tuple[float, int, list]:
    """Reads every partition of the topic to its end as the recorder's tail does, with its consumer settings:
    timed from making the consumer, through finding the partitions and reading until each has reported its end
    (a partition EOF event), to closing it, as the recorder's run is. Keeps the records."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    from gateway.kafka.records_io.reader import TAIL_SETTINGS

    started = time.perf_counter()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex}", **TAIL_SETTINGS})
    partitions = consumer.list_topics(OFFSETS_TOPIC, timeout=10).topics[OFFSETS_TOPIC].partitions
    consumer.assign([TopicPartition(OFFSETS_TOPIC, p, OFFSET_BEGINNING) for p in partitions])
    at_end: set[int] = set()
    kept = []
    while len(at_end) < len(partitions):
        # Short waits: a longer one is sat out whole at the end, for records that never come (consume() returns
        # early only with all 2,000).
        for message in consumer.consume(2000, timeout=0.02):
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(message.partition())
                continue
            if at_end:
                at_end.discard(message.partition())
            kept.append((message.key(), message.value()))
    consumer.close()
    return time.perf_counter() - started, len(kept), kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=100_000)
    parser.add_argument("--groups", type=int, default=40)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--members", type=int, default=3,
                        help="consumers of each protocol that join and leave (group metadata records)")
    args = parse_args(parser, smoke={"commits": 500, "groups": 4, "partitions": 2, "repeat": 2, "members": 1})

    with bench_stack("recorder", offsets_partitions=10):
        from offsets.models import ConsumerGroupState, GroupCommitStat, GroupGeneration, RecorderPosition
        from offsets.history.recorder import record_from_topic
        from offsets.history.records import commit_group, commit_timestamp, decode_record

        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        records, seed_s = seed(bootstrap, args.commits, args.groups, args.partitions, args.members)
        raw_runs, decode_runs, shortcut_runs, record_runs = [], [], [], []
        # One pass of each before the timed runs: it starts the cluster's client process (the recorder asks it for
        # topic names at the first KIP-848 record) once, as a recorder that runs for days does once.
        raw_consume(bootstrap)
        record_from_topic("local", should_stop=lambda: False, until_caught_up=True)
        def record_run() -> int:
            for model in (RecorderPosition, GroupCommitStat, GroupGeneration, ConsumerGroupState):
                model.objects.all().delete()
            started = time.perf_counter()
            stored = record_from_topic("local", should_stop=lambda: False, until_caught_up=True)
            record_runs.append(stored / (time.perf_counter() - started))
            return stored

        for run in range(args.repeat):
            # Whichever goes second reads a broker that just served the same records: the order alternates.
            stored = record_run() if run % 2 else None
            seconds, read, kept = raw_consume(bootstrap)
            raw_runs.append(read / seconds)
            if stored is None:
                stored = record_run()
            check(stored == read, f"the recorder stored {stored} records, the raw consumer read {read}")
            started = time.perf_counter()
            for key, value in kept:
                decode_record(key, value)
            decode_runs.append(len(kept) / (time.perf_counter() - started))
            started = time.perf_counter()
            for key, value in kept:  # as store_batch reads them: the commit shortcut, the full decoder for the rest
                if commit_group(key) is None or value is None or commit_timestamp(value) is None:
                    decode_record(key, value)
            shortcut_runs.append(len(kept) / (time.perf_counter() - started))
        commits = sum(GroupCommitStat.objects.values_list("commits", flat=True))
        generations = GroupGeneration.objects.count()

    def rate(runs: list[float]) -> str:
        return f"{statistics.median(runs):,.0f} records/s (runs: {', '.join(f'{r:,.0f}' for r in runs)})"

    lines = [
        f"## Group recorder ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/recorder.py --commits {args.commits} --groups {args.groups} "
        f"--partitions {args.partitions} --repeat {args.repeat} --members {args.members}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1), `__consumer_offsets` with 10 partitions, "
        "scratch SQLite database.",
        f"Backlog: {records:,} records in `__consumer_offsets` ({commits:,} offset commits counted by the recorder, "
        f"{generations} generations or epochs from the live consumers), written in {seed_s:.0f} s.",
        "",
        "| what | rate (median) |",
        "|---|---|",
        f"| raw consume of the same partitions (confluent-kafka, recorder's consumer settings; from making the "
        f"consumer, through its metadata request and reading to each partition's EOF, to closing it) | {rate(raw_runs)} |",
        f"| decode only, every record in full (`offsets.history.records.decode_record`, in memory) | "
        f"{rate(decode_runs)} |",
        f"| decode only, as the recorder does (`commit_group`/`commit_timestamp` for offset commits, "
        f"`decode_record` for the rest) | {rate(shortcut_runs)} |",
        f"| recorder: read, decode and store in batches of up to 50,000 with positions (`record_from_topic`, "
        f"from its first query to its tail closed) | "
        f"{rate(record_runs)} |",
        "",
        f"Recorder / raw consumer, run by run: {', '.join(f'{r / w:.2f}' for r, w in zip(record_runs, raw_runs))} "
        f"(median {statistics.median(r / w for r, w in zip(record_runs, raw_runs)):.2f}). "
        "Each run starts the recorder from an empty database, so it reads the whole backlog; the raw consumer goes "
        "first in even runs, the recorder in odd ones; one untimed pass of each before the runs starts the "
        "cluster's client process, which the recorder asks for topic names.",
        "",
        "What changed (second rewrite): the tail hands over a batch as columns (keys and values pulled out by C "
        "loops, positions from one consumer position() call) instead of a named tuple per record; the recorder "
        "tallies commits per key with one dict lookup each and decodes only the other records; generations, "
        "states, commit counts and positions are each one multi-row upsert per batch of up to 50,000; and the raw "
        "consumer is now timed as the recorder is (making the consumer, its metadata request and closing it "
        "included, reading to each partition's EOF instead of to end offsets fetched before its timer started).",
    ]
    write_section("recorder", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
