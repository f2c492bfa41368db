"""The replay application that `spark-submit` runs: reads exact offset ranges of one topic with Spark's Kafka
source and writes them to a topic or to Parquet / JSON-lines files.

    spark-submit --jars <connector jars> sparkjobs/jobs/replay.py SPEC.json

It imports no Django. It prints `CONSOLE-PROGRESS {"done": n}` while reading and, at the end,
`CONSOLE-RESULT {"read": n, "written": m, "files": [...]}`; the Celery worker parses these lines.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def emit(kind: str, payload: dict) -> None:
    print(f"CONSOLE-{kind} {json.dumps(payload)}", flush=True)


def kafka_options(source: dict, timeout_ms: int) -> dict[str, str]:
    """Connection options, bounded so a broker that is down or frozen fails the replay in about `timeout_ms`
    per step instead of Spark's and Kafka's minutes; a cluster's own settings still win."""
    options = {"kafka.bootstrap.servers": source["bootstrap"], "kafka.request.timeout.ms": str(timeout_ms),
               "kafka.default.api.timeout.ms": str(timeout_ms)}
    options.update({f"kafka.{k}": str(v) for k, v in source.get("config", {}).items()})
    return options


def reader_options(source: dict, timeout_ms: int) -> dict[str, str]:
    # The driver asks for offsets twice at most; each executor poll waits `timeout_ms` for records.
    return {**kafka_options(source, timeout_ms), "kafkaConsumer.pollTimeoutMs": str(timeout_ms),
            "fetchOffset.numRetries": "2", "fetchOffset.retryIntervalMs": "1000"}


def read_count(frame) -> int:
    return frame.load().select("offset").count()


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


def write_topic(chosen, sink: dict, spec: dict, timeout_ms: int) -> None:
    """Exactly once for read_committed readers: each task writes in a transaction of its own (see spark_sink)."""
    from pyspark import TaskContext

    from spark_sink import SinkTarget, fence_tasks, forget_tasks, write_task

    target = SinkTarget(bootstrap=sink["bootstrap"], config=sink.get("config", {}), topic=sink["topic"],
                        keep_partitions=bool(sink.get("keep_partitions")), job_key=spec["job_key"],
                        timeout_s=timeout_ms / 1000)
    crash_after = spec.get("fault", {}).get("crash_first_attempt_after")

    def write(rows):
        context = TaskContext.get()
        crash = crash_after if context.partitionId() == 0 and context.attemptNumber() == 0 else None
        yield write_task(rows, target, context.partitionId(), crash_after=crash)

    frame = chosen.select("raw_key", "raw_value", "headers", "partition").toDF("key", "value", "headers", "partition")
    tasks = frame.rdd.getNumPartitions()
    try:
        frame.rdd.mapPartitions(write).collect()
    except Exception:
        fence_tasks(target, tasks)
        raise
    forget_tasks(target, tasks)


def registry_decoder(topic: str, registry: dict, timeout_s: float):
    """decode(raw, is_key) -> (JSON-able value or text, schema dict or None), in the executors: records in the
    registry's wire format through confluent-kafka's deserializers (console.kafka.registry, shipped with
    --py-files), everything else as UTF-8 text, as Spark's cast would show it."""

    def decode(raw, is_key: bool):
        if raw is None:
            return None, None
        data = bytes(raw)
        if len(data) >= 5 and data[0] == 0:
            from console.kafka.registry import registry_codec
            from console.kafka.types import ClusterConnection

            connection = ClusterConnection("replay", "", registry_url=registry["url"],
                                           registry_config=registry.get("config", {}))
            part = registry_codec(connection, timeout=timeout_s).decode(topic, data, is_key=is_key)
            if part is not None and part.kind != "hex":
                schema = part.schema
                return part.value, {"subject": schema.subject, "version": schema.version, "id": schema.schema_id,
                                    "type": schema.schema_type}
        return data.decode("utf-8", "replace"), None

    return decode


def with_decoded_columns(records, decode):
    """`key` and `value` as text filters can read: decoded records as their JSON, so a filter such as
    get_json_object(value, '$.country') = 'NO' works on Avro, Protobuf and JSON Schema values."""
    from pyspark.sql.types import StringType

    def as_text(is_key: bool):
        def column(raw):
            value, schema = decode(raw, is_key)
            if schema is None:
                return value
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

        return F.udf(column, StringType())

    return records.withColumn("key", as_text(True)(F.col("raw_key"))) \
        .withColumn("value", as_text(False)(F.col("raw_value")))


def write_decoded_jsonl(chosen, decode, out: str, files: int) -> None:
    """JSON lines with decoded values as JSON (not strings) and the schema each was read with."""
    def line(row) -> str:
        key, key_schema = decode(row["raw_key"], True)
        value, value_schema = decode(row["raw_value"], False)
        record = {"topic": row["topic"], "partition": row["partition"], "offset": row["offset"],
                  "timestamp": row["timestamp"].strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z", "key": key,
                  "value": value, "headers": [{"key": h["key"], "value": None if h["value"] is None
                                               else bytes(h["value"]).decode("utf-8", "replace")}
                                              for h in row["headers"] or []]}
        schemas = {side: schema for side, schema in (("key", key_schema), ("value", value_schema)) if schema}
        if schemas:
            record["schema"] = schemas
        return json.dumps(record, ensure_ascii=False)

    chosen.select("topic", "partition", "offset", "timestamp", "raw_key", "raw_value", "headers") \
        .rdd.map(line).coalesce(files).saveAsTextFile(out)


def report_progress(spark: SparkSession, planned: int, stop: threading.Event) -> None:
    """Spark has no Python listener API; completed tasks of the running stages approximate records done."""
    tracker = spark.sparkContext.statusTracker()
    while not stop.wait(0.5):
        total = done = 0
        for stage_id in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage_id)
            if info is not None:
                total += info.numTasks
                done += info.numCompletedTasks
        if total:
            emit("PROGRESS", {"done": int(planned * done / total)})


def main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    source, sink, topic = spec["source"], spec["sink"], spec["topic"]
    ranges = {int(p): (s, e) for p, (s, e) in spec["ranges"].items() if e > s}
    planned = sum(e - s for s, e in ranges.values())
    spark = SparkSession.builder.appName(f"console-replay-{spec['job_id']}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    started = time.perf_counter()  # Spark is up: what follows is the replay itself
    stop = threading.Event()
    threading.Thread(target=report_progress, args=(spark, planned, stop), daemon=True).start()

    timeout_ms = int(spec.get("kafka_timeout_ms", 30_000))
    isolation = spec.get("isolation", "read_committed")

    def source_frame(level: str, partitions: int | None = None):
        frame = (spark.read.format("kafka").options(**reader_options(source, timeout_ms))
                 .option("kafka.isolation.level", level)
                 .option("assign", json.dumps({topic: sorted(ranges)}))
                 .option("startingOffsets", json.dumps({topic: {str(p): s for p, (s, _) in ranges.items()}}))
                 .option("endingOffsets", json.dumps({topic: {str(p): e for p, (_, e) in ranges.items()}}))
                 .option("includeHeaders", "true"))
        return frame.option("minPartitions", str(partitions)) if partitions else frame

    # Several Spark tasks per Kafka partition, so progress moves and both cores work.
    split = max(len(ranges), min(64, planned // 20_000 + 1))
    records = (
        source_frame(isolation, split).load()
        .withColumnRenamed("key", "raw_key").withColumnRenamed("value", "raw_value")
        .withColumn("key", F.col("raw_key").cast("string"))
        .withColumn("value", F.col("raw_value").cast("string"))
    )
    registry = spec.get("registry")
    decode = registry_decoder(topic, registry, timeout_ms / 1000) if registry else None
    if decode is not None:
        records = with_decoded_columns(records, decode)
    records = records.persist(StorageLevel.DISK_ONLY)  # read Kafka once: counted, filtered, written
    read = records.count()
    aborted, markers = offsets_without_records(read, planned, isolation,
                                              lambda: read_count(source_frame("read_uncommitted", split)))
    chosen = records.where(spec["filter"]) if spec.get("filter") else records
    written = chosen.count()
    files: list[str] = []
    if sink["kind"] == "topic":
        write_topic(chosen, sink, spec, timeout_ms)
    else:
        out = sink["path"]
        if sink["kind"] == "parquet":
            frame = chosen.selectExpr("topic", "partition", "offset", "timestamp", "raw_key AS key",
                                      "raw_value AS value", "headers")
            frame.coalesce(max(1, min(8, written // 500_000 + 1))).write.mode("errorifexists").parquet(out)
        elif decode is not None:
            write_decoded_jsonl(chosen, decode, out, max(1, min(8, written // 500_000 + 1)))
        else:
            frame = chosen.selectExpr("topic", "partition", "offset", "timestamp", "key", "value",
                                      "transform(headers, h -> named_struct('key', h.key, 'value', "
                                      "CAST(h.value AS STRING))) AS headers")
            frame.coalesce(max(1, min(8, written // 500_000 + 1))).write.mode("errorifexists").json(out)
        files = sorted(str(p) for p in Path(out).glob("part-*"))
    stop.set()
    emit("PROGRESS", {"done": planned})
    emit("RESULT", {"read": read, "written": written, "files": files, "aborted": aborted, "markers": markers,
                    "processing_s": round(time.perf_counter() - started, 3)})
    records.unpersist()
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
