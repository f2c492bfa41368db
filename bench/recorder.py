"""The group recorder on a backlog of offset commits in `__consumer_offsets`: decode-and-store rate against the
raw consume rate of the same partitions, and the decode rate alone.

    .venv/bin/python bench/recorder.py [--commits 100000] [--groups 40] [--partitions 10] [--repeat 3]

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

from bench.common import bench_stack, machine, write_section  # noqa: E402

OFFSETS_TOPIC = "__consumer_offsets"


def seed(bootstrap: str, commits: int, groups: int, partitions: int) -> tuple[int, float]:
    """Offset commits until the internal topic holds `commits` records; returns (records in it, seconds)."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    started = time.perf_counter()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("rbench", partitions, 1)])["rbench"].result()
    time.sleep(3)
    producer = Producer({"bootstrap.servers": bootstrap})
    for p in range(partitions):
        producer.produce("rbench", value=b"x", partition=p)
    producer.flush(30)
    for protocol in ("classic", "consumer"):  # some group metadata records among the commits
        for _ in range(3):
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


def raw_consume(bootstrap: str, ends: dict[int, int]) -> tuple[float, int, list]:
    """Reads the same partitions to the same ends with the recorder's consumer settings; keeps the records."""
    from confluent_kafka import Consumer, TopicPartition

    from console.kafka.reader import TAIL_SETTINGS

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex}", **TAIL_SETTINGS})
    started = time.perf_counter()
    consumer.assign([TopicPartition(OFFSETS_TOPIC, p, 0) for p in ends])
    remaining = {p for p, end in ends.items() if end > 0}
    kept = []
    while remaining:
        # Short waits: a longer one is sat out whole at the end, for records that never come (consume() returns
        # early only with all 2,000), which once cost this consumer up to a second of each run.
        for message in consumer.consume(2000, timeout=0.02):
            if message.error():
                continue
            kept.append((message.key(), message.value()))
            if message.offset() + 1 >= ends[message.partition()]:
                remaining.discard(message.partition())
    seconds = time.perf_counter() - started
    consumer.close()
    return seconds, len(kept), kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=100_000)
    parser.add_argument("--groups", type=int, default=40)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with bench_stack("recorder", offsets_partitions=10):
        from offsets.models import ConsumerGroupState, GroupCommitStat, GroupGeneration, RecorderPosition
        from offsets.history.recorder import record_from_topic
        from offsets.history.records import commit_group, commit_timestamp, decode_record

        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        records, seed_s = seed(bootstrap, args.commits, args.groups, args.partitions)
        ends = end_offsets(bootstrap)
        raw_runs, decode_runs, shortcut_runs, record_runs = [], [], [], []
        for _ in range(args.repeat):
            seconds, read, kept = raw_consume(bootstrap, ends)
            raw_runs.append(read / seconds)
            started = time.perf_counter()
            for key, value in kept:
                decode_record(key, value)
            decode_runs.append(len(kept) / (time.perf_counter() - started))
            started = time.perf_counter()
            for key, value in kept:  # as store_batch reads them: the commit shortcut, the full decoder for the rest
                if commit_group(key) is None or value is None or commit_timestamp(value) is None:
                    decode_record(key, value)
            shortcut_runs.append(len(kept) / (time.perf_counter() - started))
            for model in (RecorderPosition, GroupCommitStat, GroupGeneration, ConsumerGroupState):
                model.objects.all().delete()
            started = time.perf_counter()
            stored = record_from_topic("local", should_stop=lambda: False, until_caught_up=True)
            record_runs.append(stored / (time.perf_counter() - started))
            assert stored == read, (stored, read)
        commits = sum(GroupCommitStat.objects.values_list("commits", flat=True))
        generations = GroupGeneration.objects.count()

    def rate(runs: list[float]) -> str:
        return f"{statistics.median(runs):,.0f} records/s (runs: {', '.join(f'{r:,.0f}' for r in runs)})"

    lines = [
        f"## Group recorder ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/recorder.py --commits {args.commits} --groups {args.groups} "
        f"--partitions {args.partitions} --repeat {args.repeat}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1), `__consumer_offsets` with 10 partitions, "
        "scratch SQLite database.",
        f"Backlog: {records:,} records in `__consumer_offsets` ({commits:,} offset commits counted by the recorder, "
        f"{generations} generations or epochs from the live consumers), written in {seed_s:.0f} s.",
        "",
        "| what | rate (median) |",
        "|---|---|",
        f"| raw consume of the same partitions (confluent-kafka, recorder's consumer settings) | {rate(raw_runs)} |",
        f"| decode only, every record in full (`offsets.history.records.decode_record`, in memory) | "
        f"{rate(decode_runs)} |",
        f"| decode only, as the recorder does (`commit_group`/`commit_timestamp` for offset commits, "
        f"`decode_record` for the rest) | {rate(shortcut_runs)} |",
        f"| recorder: read, decode and store in batches of up to 10,000 with positions (`record_from_topic`) | "
        f"{rate(record_runs)} |",
        "",
        f"Recorder / raw consumer, run by run: {', '.join(f'{r / w:.2f}' for r, w in zip(record_runs, raw_runs))} "
        f"(median {statistics.median(r / w for r, w in zip(record_runs, raw_runs)):.2f}). "
        "Each run starts the recorder from an empty database, so it reads the whole backlog.",
    ]
    write_section("recorder", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
