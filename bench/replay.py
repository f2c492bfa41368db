"""Replay throughput: Spark (Parquet and topic sinks) against a plain confluent-kafka consumer, same range.

    .venv/bin/python bench/replay.py [--records 1000000] [--size 200] [--partitions 4]

Produces the records, then replays them with the project's spark-submit runner (what the Celery worker runs),
reporting records/s with and without Spark's start-up, and reads the same range with one plain consumer. Start-up
is the time from spark-submit to the application's first line (Spark up, nothing read yet); processing is what
the application measures from there to its result (reading, writing, counting). The last line printed is JSON.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import bench_stack, check, machine, parse_args, wait_for_leaders, write_section  # noqa: E402


def produce(bootstrap: str, topic: str, records: int, size: int, partitions: int) -> float:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the future resolves
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()
    wait_for_leaders(admin, [topic])
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


# Replays in one driver need ids of their own; the console's are ReplayJob primary keys, integers.
_JOB_IDS = itertools.count(1)


def replay_spec(bootstrap: str, topic: str, ranges: dict, sink):
    """The spec of one replay of `ranges` to `sink` (a FileSink or a TopicSink), typed as the console's are
    (sparkjobs/jobs/replay_spec.py), with an id of its own among the bench's replays."""
    from sparkjobs.jobs.replay_spec import KafkaSource, ReplaySpec

    job_id = next(_JOB_IDS)
    return ReplaySpec(job_id=job_id, job_key=f"bench-{job_id}-{time.time_ns()}", topic=topic,
                      ranges={p: tuple(r) for p, r in ranges.items()}, source=KafkaSource(bootstrap), sink=sink,
                      isolation="read_committed")


def spark_replay(bootstrap: str, topic: str, ranges: dict, sink, work: Path) -> tuple[float, float, dict]:
    """(wall seconds, start-up seconds, the application's result) of one replay, through the runner the Celery
    worker uses."""
    from sparkjobs import runner

    spec = replay_spec(bootstrap, topic, ranges, sink)
    job_id = spec.job_id
    spec_path = work / f"spec-{job_id}-{sink.kind}.json"
    spec_path.write_text(spec.to_json())
    ready: list[float] = []
    started = time.perf_counter()

    def on_progress(done: int) -> None:  # the first line comes once the SparkSession is up
        if not ready:
            ready.append(time.perf_counter() - started)

    outcome = runner.run(spec_path, work / f"{job_id}-{sink.kind}.log",
                         on_progress=on_progress, should_cancel=lambda: False)
    elapsed = time.perf_counter() - started
    if outcome["state"] != "succeeded":
        raise RuntimeError(outcome["error"])
    planned = sum(e - s for s, e in ranges.values())
    check(outcome["result"]["read"] == planned, f"the {sink.kind} replay read {outcome['result']['read']} records "
                                                f"of a range of {planned}")
    check(outcome["result"]["written"] == planned, f"the {sink.kind} replay wrote {outcome['result']['written']} "
                                                   f"records of {planned} read, with no filter")
    check(ready, f"the {sink.kind} replay reported no progress")
    return elapsed, ready[0], outcome["result"]


PROFILE = """\
Before issue 15 this bench measured 33,504 records/s to Parquet and 19,782 records/s to a topic (processing),
start-up about 10 s. Where the time went then (the same 1,000,000 records; one run, timed inside the application):
spark-submit to a SparkSession 11.7 s; building the Kafka frame (the driver's first offset requests, cold
classes) 6.1 s; reading the range, persisting it to local disk and counting it 20.3 s; counting it again after
the (empty) filter 1.1 s; writing Parquet from the persisted copy 7.1 s: 34.5 s of processing for a range a
plain consumer reads in 2 s. Apart, in one JVM (spark-submit of a small script): a count of the range took
15.0 s cold and 5.4 s once the JIT had compiled the read path; with the Java consumer's defaults (500 records
a poll, 1 MiB a partition per fetch, a 64 KiB socket buffer) replaced by 20,000 records, 8 MiB and 1 MiB, the
warm count took 2.5 s and the cold one 9.9 s; a warm Parquet write of the range 4.4 s. Start-up, timed in a
script: 2.5 s until Python runs (two JVMs: spark-submit's launcher, then the driver), 0.9 s importing pyspark,
4.8 s creating the session, 3.6 s planning and running a first tiny job (classes loaded and verified from
pyspark's jars, and interpreted). The topic sink paid the same read, persist and counts, then sent each record
through a Python Row with attribute access and `poll(0)` per record, in librdkafka's small default batches.

What changed, in two steps. First, in the application: the range is read once, never persisted; the file
writers count it with Spark's observed metrics while writing (before and after the filter), the topic sink's
Python tasks count what they read and wrote (the filter is a column, so a dropped record crosses without its
key, value and headers); the consumer fetches in large batches; the range is split into a few tasks per core,
none under 50,000 records; the topic sink's producers batch up to 100,000 records (lz4, 50 ms linger) and poll
every 2,000 records. That gave 72,780 records/s to Parquet and 35,779 to a topic with a start-up of 7 s: one
spark-submit per replay still used about 34 s of CPU for a 21 s Parquet run, most of it interpreting and
JIT-compiling the read and write paths on the same two cores.

Second, where replays run: one resident Spark driver per worker machine (`sparkjobs/jobs/driver.py`) takes
every replay, so each finds the session up and the paths compiled. In that warm JVM (same 1,000,000 records,
one session, timed per action): a count of the range 2.0-2.6 s, a Parquet write of it 3.5-4.6 s, and the
topic sink's Arrow transfer alone 10-13 s, against 2.9-4.2 s once the headers column was left out. Spark's
Arrow writer is that slow on an array of structs even when every array is empty, so the topic sink now gets
the headers as one JSON text per record (null when there are none): 3.2 s. The Python side, moved from
pickled Rows (`rdd.mapPartitions`) to Arrow batches (`mapInArrow`, a column to Python objects at once),
produces about 270,000 records/s per task alone (`write_task` timed outside Spark). Parquet compression
(none, lz4_raw) and disabling dictionaries changed nothing beyond the run-to-run noise (±1 s).

A worker starts its driver when it comes up (`REPLAY_DRIVER_PRESTART`), and the driver runs generated rows
shaped like Kafka's through the Parquet and Arrow paths once, in the background, before any replay needs them;
without that warm-up the first large replay in a new driver ran at about 130,000-160,000 records/s to Parquet
and 90,000-100,000 to a topic. Kafka's read path cannot be warmed without a cluster, so round 1 stays slower
than the later ones. The driver itself starts in 7-8 s, paid by no replay unless one arrives within
seconds of the worker's start or after `REPLAY_DRIVER_IDLE_S` idle seconds (then by that one replay)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="replays of each sink, one after the other")
    args = parse_args(parser, smoke={"records": 4000, "rounds": 1})
    with bench_stack("replay"):
        from django.conf import settings

        # The driver's folder and the Parquet files go in the bench's scratch folder, which bench_stack removes.
        work = Path(os.environ["KAFKA_CLIENT_SOCKET_DIR"]).parent / "replays"
        work.mkdir()
        settings.REPLAY_OUTPUT_DIR = str(work)
        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        produce_s = produce(bootstrap, "replay-source", args.records, args.size, args.partitions)
        produce(bootstrap, "replay-target", 0, args.size, args.partitions)
        per = args.records // args.partitions
        ranges = {p: (0, per + (1 if p < args.records % args.partitions else 0)) for p in range(args.partitions)}
        plain_s = plain_consumer(bootstrap, "replay-source", ranges)
        from sparkjobs import runner
        from sparkjobs.jobs.replay_spec import FileSink, TopicSink

        try:
            # The driver as a worker starts it when it comes up: started, then warmed up in the background.
            started = time.perf_counter()
            driver = runner.ensure_driver()
            driver_up = time.perf_counter() - started
            while (driver.ask({"ping": True}) or {}).get("warming"):
                time.sleep(0.2)
            warm_s = time.perf_counter() - started
            first_s, first_up, _ = spark_replay(bootstrap, "replay-source", {p: (0, min(1000, per)) for p in ranges},
                                                FileSink(kind="parquet", path=str(work / "out-first")), work)
            rounds = []
            for n_round in range(args.rounds):
                rounds.append({
                    "parquet": spark_replay(bootstrap, "replay-source", ranges,
                                            FileSink(kind="parquet", path=str(work / f"out-parquet-{n_round}")), work),
                    "topic": spark_replay(bootstrap, "replay-source", ranges,
                                          TopicSink(topic="replay-target", bootstrap=bootstrap, keep_partitions=True),
                                          work)})
        finally:
            runner.stop_drivers()
    n = args.records

    def rate(seconds: float) -> str:
        return f"{n / seconds:,.0f} records/s ({seconds:.1f} s)"

    table = []
    for number, replays in enumerate(rounds, 1):
        for kind, label in (("parquet", "→ Parquet"), ("topic", "→ topic, exactly once")):
            wall, up, result = replays[kind]
            table.append(f"| {number} | Spark replay {label} (read {result['read']:,}, written {result['written']:,}) "
                         f"| {up:.2f} s | {rate(result['processing_s'])} | {rate(wall)} |")
    best = {kind: min(r[kind][2]["processing_s"] for r in rounds) for kind in ("parquet", "topic")}
    last = rounds[-1]
    lines = [
        f"## Replay ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/replay.py --records {n} --size {args.size} --partitions {args.partitions} "
        f"--rounds {args.rounds}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker; Spark `local[*]` in the console's resident driver "
        f"(pyspark 4.3.0, connector 4.2.0). {n:,} records of {args.size} bytes in {args.partitions} partitions "
        f"(produced in {produce_s:.1f} s). Start-up: from the runner's call until the replay's first line (its "
        "Spark jobs about to start); processing: from there to the result, Kafka read, write and counts included.",
        "",
        f"The resident driver started in {driver_up:.1f} s and had warmed up (generated rows through the Parquet and "
        f"Arrow paths) {warm_s:.1f} s after its start, as a worker starts it when it comes up. A first replay of "
        f"{args.partitions * min(1000, per):,} records: start-up {first_up:.2f} s, whole run {first_s:.1f} s. Then, one "
        "after the other:",
        "",
        "| round | what | start-up | processing (Spark's own) | whole run |",
        "|---|---|---|---|---|",
        *table,
        f"| – | plain confluent-kafka consumer, same range (read only, one process) | – | {rate(plain_s)} | – |",
        "",
        f"Against the plain consumer of this run, the best round's processing: Parquet {n / best['parquet']:,.0f} "
        f"records/s (**{plain_s / best['parquet']:.2f}** of the consumer's {n / plain_s:,.0f}), topic "
        f"{n / best['topic']:,.0f} records/s (**{plain_s / best['topic']:.2f}**).",
        "",
        PROFILE,
    ]
    write_section("replay", "\n".join(lines))
    print("\n".join(lines))
    print(json.dumps({"records": n, "size": args.size, "partitions": args.partitions,
                      "plain_consumer_rps": round(n / plain_s),
                      "driver_start_s": round(driver_up, 2), "driver_warm_s": round(warm_s, 2),
                      "first_replay_startup_s": round(first_up, 3), "first_replay_wall_s": round(first_s, 2),
                      "parquet_rps": [round(n / r["parquet"][2]["processing_s"]) for r in rounds],
                      "topic_rps": [round(n / r["topic"][2]["processing_s"]) for r in rounds],
                      "parquet_startup_s": [round(r["parquet"][1], 3) for r in rounds],
                      "topic_startup_s": [round(r["topic"][1], 3) for r in rounds],
                      "best_parquet_rps": round(n / best["parquet"]), "best_topic_rps": round(n / best["topic"]),
                      "best_parquet_to_plain": round(plain_s / best["parquet"], 3),
                      "best_topic_to_plain": round(plain_s / best["topic"], 3),
                      "last_parquet_wall_s": round(last["parquet"][0], 2),
                      "last_topic_wall_s": round(last["topic"][0], 2)}))


if __name__ == "__main__":
    main()
