"""Replay throughput: Spark (Parquet and topic sinks) against a plain confluent-kafka consumer, same range.

    .venv/bin/python bench/replay.py [--records 1000000] [--size 200] [--partitions 4]

Produces the records, then replays them with the project's spark-submit runner (what the Celery worker runs),
reporting records/s with and without Spark's start-up, and reads the same range with one plain consumer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import bench_stack, machine, write_section  # noqa: E402


def produce(bootstrap: str, topic: str, records: int, size: int, partitions: int) -> float:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the future resolves
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()
    time.sleep(2)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000,
                         "queue.buffering.max.messages": 2_000_000, "compression.type": "lz4"})
    payload = b"x" * size
    started = time.perf_counter()
    for i in range(records):
        while True:
            try:
                producer.produce(topic, key=str(i).encode(), value=payload, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush(300)
    return time.perf_counter() - started


def plain_consumer(bootstrap: str, topic: str, ranges: dict[int, tuple[int, int]]) -> float:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-plain", "enable.auto.commit": False,
                         "fetch.max.bytes": 52_428_800, "max.partition.fetch.bytes": 10_485_760})
    consumer.assign([TopicPartition(topic, p, s) for p, (s, _) in ranges.items()])
    remaining = {p: e - s for p, (s, e) in ranges.items()}
    started = time.perf_counter()
    while any(remaining.values()):
        for message in consumer.consume(10_000, timeout=1.0):
            if message.error() is None and remaining.get(message.partition(), 0) > 0:
                remaining[message.partition()] -= 1
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


def spark_replay(bootstrap: str, topic: str, ranges: dict, sink: dict, work: Path) -> tuple[float, dict]:
    from sparkjobs import runner

    spec = {"job_id": sink["kind"], "job_key": f"bench-{time.time_ns()}", "topic": topic,
            "ranges": {str(p): list(r) for p, r in ranges.items()}, "filter": "", "isolation": "read_committed",
            "source": {"bootstrap": bootstrap, "config": {}}, "sink": sink}
    spec_path = work / f"spec-{sink['kind']}.json"
    spec_path.write_text(json.dumps(spec))
    started = time.perf_counter()
    outcome = runner.run(runner.spark_submit_command(spec_path), work / f"{sink['kind']}.log",
                         on_progress=lambda done: None, should_cancel=lambda: False)
    elapsed = time.perf_counter() - started
    if outcome["state"] != "succeeded":
        raise RuntimeError(outcome["error"])
    return elapsed, outcome["result"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    with bench_stack("replay"):
        from django.conf import settings

        settings.REPLAY_OUTPUT_DIR = str(work)
        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        produce_s = produce(bootstrap, "replay-source", args.records, args.size, args.partitions)
        produce(bootstrap, "replay-target", 0, args.size, args.partitions)
        per = args.records // args.partitions
        ranges = {p: (0, per + (1 if p < args.records % args.partitions else 0)) for p in range(args.partitions)}
        plain_s = plain_consumer(bootstrap, "replay-source", ranges)
        parquet_s, parquet = spark_replay(bootstrap, "replay-source", ranges,
                                          {"kind": "parquet", "path": str(work / "out-parquet")}, work)
        topic_s, to_topic = spark_replay(bootstrap, "replay-source", ranges,
                                         {"kind": "topic", "topic": "replay-target", "bootstrap": bootstrap,
                                          "config": {}, "keep_partitions": True}, work)
    n = args.records

    def rate(seconds: float) -> str:
        return f"{n / seconds:,.0f} records/s ({seconds:.1f} s)"

    lines = [
        f"## Replay ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/replay.py --records {n} --size {args.size} --partitions {args.partitions}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker; Spark `local[*]` through spark-submit (pyspark 4.3.0, "
        f"connector 4.2.0). {n:,} records of {args.size} bytes in {args.partitions} partitions "
        f"(produced in {produce_s:.1f} s).",
        "",
        "| what | with Spark start-up | without (Spark's own processing time) |",
        "|---|---|---|",
        f"| Spark replay → Parquet (read {parquet['read']:,}, written {parquet['written']:,}) | {rate(parquet_s)} | "
        f"{rate(parquet['processing_s'])} |",
        f"| Spark replay → topic, exactly once (one transaction per Spark task; read {to_topic['read']:,}, "
        f"written {to_topic['written']:,}) | {rate(topic_s)} | "
        f"{rate(to_topic['processing_s'])} |",
        f"| plain confluent-kafka consumer, same range (read only, one process) | {rate(plain_s)} | – |",
        "",
        "Spark reads the range once (read_committed, persisted to local disk), counts it, and writes it; start-up "
        "is the spark-submit JVM and SparkSession, about 10 s on this machine. The topic sink writes each Spark "
        "task's records with a transactional confluent-kafka producer in the Python worker "
        "(console/kafka/spark_sink.py), so the records cross from the JVM to Python once.",
    ]
    write_section("replay", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
