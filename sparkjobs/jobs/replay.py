"""The replay application: reads exact offset ranges of one topic with Spark's Kafka source and writes them to a
topic or to Parquet / JSON-lines files.

    spark-submit --jars <connector jars> \
        --py-files <replay_spec.py,replay_sinks.py,replay_schemas.py,spark_sink.py,protobuf_rows.py,the gateway's zip> \
        sparkjobs/jobs/replay.py SPEC.json

It imports no Django. The console runs it inside its resident Spark driver (jobs/driver.py), which passes on
`CONSOLE-PROGRESS {"done": n}` lines while reading and, at the end, `CONSOLE-RESULT {"read": n, "written": m,
"files": [...]}` to the Celery worker; run by hand, it prints them.

The range is read from Kafka once: the records are counted while they are written (Spark's observed metrics for
the file writers, counters in the Python tasks for the topic sink and decoded JSON lines), never in passes of
their own. Only a range with fewer records than offsets is read a second time, under read_uncommitted, to tell
aborted records from transaction markers.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import Observation, SparkSession
from pyspark.sql import functions as F

if TYPE_CHECKING:
    from replay_spec import FileSink, KafkaSource, ReplaySpec


def print_line(kind: str, payload: dict) -> None:
    print(f"CONSOLE-{kind} {json.dumps(payload)}", flush=True)


def kafka_options(source: KafkaSource, timeout_ms: int) -> dict[str, str]:
    """Connection options, bounded so a broker that is down or frozen fails the replay in about `timeout_ms`
    per step instead of Spark's and Kafka's minutes; a cluster's own settings still win."""
    options = {"kafka.bootstrap.servers": source.bootstrap, "kafka.request.timeout.ms": str(timeout_ms),
               "kafka.default.api.timeout.ms": str(timeout_ms)}
    options.update({f"kafka.{k}": str(v) for k, v in source.config.items()})
    return options


# Bulk reads: the Java consumer's defaults (500 records a poll, 1 MiB a partition per fetch, a 64 KiB socket
# buffer) cost a poll every 500 records; measured on 1M records of 200 bytes these halve the read time.
FETCH_TUNING = {"kafka.max.poll.records": "20000", "kafka.max.partition.fetch.bytes": str(8 << 20),
                "kafka.fetch.max.bytes": str(32 << 20), "kafka.receive.buffer.bytes": str(1 << 20)}


def reader_options(source: KafkaSource, timeout_ms: int) -> dict[str, str]:
    # The driver asks for offsets twice at most; each executor poll waits `timeout_ms` for records.
    return {**FETCH_TUNING, **kafka_options(source, timeout_ms), "kafkaConsumer.pollTimeoutMs": str(timeout_ms),
            "fetchOffset.numRetries": "2", "fetchOffset.retryIntervalMs": "1000"}


def read_count(frame) -> int:
    return frame.load().select("offset").count()


def counted(frame, name: str):
    """(frame, observation): the frame counts its rows as an action writes it, inside Spark's own plan."""
    observation = Observation(name)
    return frame.observe(observation, F.count(F.lit(1)).alias("rows")), observation


def task_count(spark: SparkSession, planned: int) -> int:
    """Spark tasks to split the range into: a few per core so both cores stay busy and progress moves, with no
    task under about 50,000 records (each task has its own Kafka fetches, and its own file)."""
    cores = spark.sparkContext.defaultParallelism
    return max(1, min(4 * cores, planned // 50_000 + 1, 64))


def offsets_without_records(read: int, planned: int, isolation: str, count_uncommitted) -> tuple[int | None, int]:
    """(aborted records, transaction markers) among the range's offsets. Under read_committed a gap means one or
    both, told apart by counting what read_uncommitted sees, which is only done when there is a gap; under
    read_uncommitted every gap is a marker, and aborted records are among those read (their number unknown)."""
    if read >= planned:
        return 0, 0
    if isolation == "read_uncommitted":
        return None, planned - read
    everything = count_uncommitted()
    return everything - read, planned - everything


def list_files(spark: SparkSession, out: str) -> list[str]:
    """The part files written, through Hadoop's file system (a local folder or an object store alike)."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(out)
    statuses = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).listStatus(path)
    names = sorted(str(status.getPath().toString()) for status in statuses
                   if status.getPath().getName().startswith("part-"))
    return [name.removeprefix("file:") if name.startswith("file:/") else name for name in names]


EXTENSIONS = {"jsonl": ".jsonl", "parquet": ".parquet"}


def with_extension(name: str, kind: str) -> str:
    """A part file's name ending in its format's extension, so a person who downloads it can open it by type:
    Spark's text writer adds none (part-00000) and its JSON writer adds ".json" to what is JSON lines."""
    extension = EXTENSIONS.get(kind, "")
    if not extension or name.endswith(extension):
        return name
    return name.removesuffix(".json") + extension


def name_files(spark: SparkSession, out: str, kind: str) -> list[str]:
    """Renames the part files to carry their extension (a rename within the job's own new folder, through
    Hadoop's file system, so an object store works alike), then lists them."""
    jvm = spark.sparkContext._jvm
    folder = jvm.org.apache.hadoop.fs.Path(out)
    fs = folder.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    for status in fs.listStatus(folder):
        name = status.getPath().getName()
        wanted = with_extension(name, kind)
        if name.startswith("part-") and wanted != name:
            fs.rename(status.getPath(), jvm.org.apache.hadoop.fs.Path(folder, wanted))
    return list_files(spark, out)


def report_progress(spark: SparkSession, group: str, planned: int, emit, stop: threading.Event) -> None:
    """Spark has no Python listener API; completed tasks of the replay's running stages approximate records done.
    Only this replay's jobs count (its job group): the resident driver may run others at the same time."""
    tracker = spark.sparkContext.statusTracker()
    while not stop.wait(0.5):
        total = done = 0
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id)
            if job is None or job.status != "RUNNING":
                continue
            for stage_id in job.stageIds:
                info = tracker.getStageInfo(stage_id)
                if info is not None and info.numActiveTasks + info.numCompletedTasks > 0:
                    total += info.numTasks
                    done += info.numCompletedTasks
        if total:
            emit("PROGRESS", {"done": int(planned * done / total)})


def job_group(spec: ReplaySpec) -> str:
    return f"console-replay-{spec.job_id}"


def run(spark: SparkSession, spec: ReplaySpec, emit) -> dict:
    """Runs one replay in `spark` (the caller has set the thread's job group to job_group(spec)) and returns its
    result; `emit(kind, payload)` reports progress."""
    ranges = {p: (s, e) for p, (s, e) in spec.ranges.items() if e > s}
    planned = sum(e - s for s, e in ranges.values())
    started = time.perf_counter()
    emit("PROGRESS", {"done": 0})
    # s3a keys: in the driver's configuration, not on a command line. They are the same for every replay of a
    # driver (its worker's environment), which matters because Hadoop caches a file system per bucket.
    for name, value in (spec.sink.hadoop if spec.sink.kind != "topic" else {}).items():
        spark.sparkContext._jsc.hadoopConfiguration().set(name, value)
    stop = threading.Event()
    threading.Thread(target=report_progress, args=(spark, job_group(spec), planned, emit, stop), daemon=True).start()
    try:
        result = _replay(spark, spec, ranges, planned)
    finally:
        stop.set()
    emit("PROGRESS", {"done": planned})
    return {**result, "processing_s": round(time.perf_counter() - started, 3)}


def _replay(spark: SparkSession, spec: ReplaySpec, ranges: dict[int, tuple[int, int]], planned: int) -> dict:
    # Top-level modules in Spark (--py-files), imported here so that the console can import this one as
    # sparkjobs.jobs.replay for its pure helpers.
    from replay_schemas import registry_decoder, with_decoded_columns
    from replay_sinks import write_decoded_jsonl, write_masked_parquet, write_topic

    source, sink, topic = spec.source, spec.sink, spec.topic
    timeout_ms, isolation = spec.kafka_timeout_ms, spec.isolation

    def source_frame(level: str, partitions: int | None = None):
        frame = (spark.read.format("kafka").options(**reader_options(source, timeout_ms))
                 .option("kafka.isolation.level", level)
                 .option("assign", json.dumps({topic: sorted(ranges)}))
                 .option("startingOffsets", json.dumps({topic: {str(p): s for p, (s, _) in ranges.items()}}))
                 .option("endingOffsets", json.dumps({topic: {str(p): e for p, (_, e) in ranges.items()}}))
                 .option("includeHeaders", "true"))
        return frame.option("minPartitions", str(partitions)) if partitions else frame

    # Kafka partitions split into several Spark tasks each, so both cores work and progress moves.
    split = max(len(ranges), task_count(spark, planned))
    records = (source_frame(isolation, split).load()
               .withColumnRenamed("key", "raw_key").withColumnRenamed("value", "raw_value"))
    registry = spec.registry
    decode = registry_decoder(topic, registry, timeout_ms / 1000) if registry else None
    masked = bool(spec.mask_rules)
    if masked:
        from replay_sinks import plain_decoder

        decode = plain_decoder(decode)  # masked files go through the Python writer, which masks each line
    needs_text = bool(spec.filter) or (sink.kind == "jsonl" and decode is None)
    if needs_text:  # key and value as text only where the filter or the JSON-lines sink reads them
        if decode is not None:
            records = with_decoded_columns(records, decode)
        else:
            records = records.withColumn("key", F.col("raw_key").cast("string")) \
                .withColumn("value", F.col("raw_value").cast("string"))
    keep = F.expr(spec.filter) if spec.filter else None
    if sink.kind == "topic":
        read, written = write_topic(records, keep, sink, spec, timeout_ms)
        files: list[str] = []
    else:
        if sink.kind == "jsonl" and decode is not None:
            read, written = write_decoded_jsonl(spark, records, keep, decode, sink.path,
                                                mask=(spec.mask_rules, spec.mask_hash_key) if masked else None)
        elif sink.kind == "parquet" and masked:
            read, written = write_masked_parquet(spark, records, keep, decode, sink.path,
                                                 (spec.mask_rules, spec.mask_hash_key))
        else:
            read, written = _write_files(spark, spec, sink, records, keep, timeout_ms)
        files = name_files(spark, sink.path, sink.kind)
    aborted, markers = offsets_without_records(read, planned, isolation,
                                              lambda: read_count(source_frame("read_uncommitted", split)))
    return {"read": read, "written": written, "files": files, "aborted": aborted, "markers": markers}


def _write_files(spark: SparkSession, spec: ReplaySpec, sink: FileSink, records, keep,
                 timeout_ms: int) -> tuple[int, int]:
    """Parquet or JSON lines through Spark's own writers; returns (read, written), observed as they write."""
    from replay_schemas import typed_columns

    registry = spec.registry
    columns = (typed_columns(spark, records, registry, timeout_ms / 1000) if sink.typed and registry
               else [F.col("raw_key").alias("key"), F.col("raw_value").alias("value")])
    # Observation names are the job's own: other replays may run in the same session.
    records, read_seen = counted(records, f"read-{spec.job_id}")
    chosen, written_seen = counted(records.where(keep) if keep is not None else records, f"written-{spec.job_id}")
    if sink.kind == "parquet":
        frame = chosen.select("topic", "partition", "offset", "timestamp", *columns, "headers")
        frame.write.mode("errorifexists").parquet(sink.path)
    else:
        frame = chosen.selectExpr("topic", "partition", "offset", "timestamp", "key", "value",
                                  "transform(headers, h -> named_struct('key', h.key, 'value', "
                                  "CAST(h.value AS STRING))) AS headers")
        frame.write.mode("errorifexists").json(sink.path)
    return read_seen.get["rows"], written_seen.get["rows"]


def main(spec_path: str) -> None:
    """One replay in a Spark application of its own (the resident driver, jobs/driver.py, is how the console
    runs them): handy to run a spec by hand with spark-submit."""
    from replay_spec import ReplaySpec

    spec = ReplaySpec.from_json(Path(spec_path).read_text())
    spark = SparkSession.builder.appName(job_group(spec)).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    spark.sparkContext.setJobGroup(job_group(spec), "replay", interruptOnCancel=True)
    print_line("RESULT", run(spark, spec, print_line))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
