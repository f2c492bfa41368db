"""The replay application: reads exact offset ranges of one topic with Spark's Kafka source and writes them to a
topic or to Parquet / JSON-lines files.

    spark-submit --jars <connector jars> --py-files <spark_sink.py,protobuf_rows.py,the gateway's zip> \
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

import base64
import json
import sys
import threading
import time
from pathlib import Path

from pyspark.sql import Observation, SparkSession
from pyspark.sql import functions as F


def print_line(kind: str, payload: dict) -> None:
    print(f"CONSOLE-{kind} {json.dumps(payload)}", flush=True)


def kafka_options(source: dict, timeout_ms: int) -> dict[str, str]:
    """Connection options, bounded so a broker that is down or frozen fails the replay in about `timeout_ms`
    per step instead of Spark's and Kafka's minutes; a cluster's own settings still win."""
    options = {"kafka.bootstrap.servers": source["bootstrap"], "kafka.request.timeout.ms": str(timeout_ms),
               "kafka.default.api.timeout.ms": str(timeout_ms)}
    options.update({f"kafka.{k}": str(v) for k, v in source.get("config", {}).items()})
    return options


# Bulk reads: the Java consumer's defaults (500 records a poll, 1 MiB a partition per fetch, a 64 KiB socket
# buffer) cost a poll every 500 records; measured on 1M records of 200 bytes these halve the read time.
FETCH_TUNING = {"kafka.max.poll.records": "20000", "kafka.max.partition.fetch.bytes": str(8 << 20),
                "kafka.fetch.max.bytes": str(32 << 20), "kafka.receive.buffer.bytes": str(1 << 20)}


def reader_options(source: dict, timeout_ms: int) -> dict[str, str]:
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


def write_topic(records, keep, sink: dict, spec: dict, timeout_ms: int) -> tuple[int, int]:
    """Exactly once for read_committed readers: each task writes in a transaction of its own (see spark_sink).
    `keep` is the filter as a column (or None): every record reaches its task, which counts what it read and what
    passed, so the range is read once; a record the filter drops crosses without its key, value and headers.
    Returns (read, written)."""
    from pyspark import TaskContext

    from spark_sink import SinkTarget, fence_tasks, forget_tasks, write_task

    target = SinkTarget(bootstrap=sink["bootstrap"], config=sink.get("config", {}), topic=sink["topic"],
                        keep_partitions=bool(sink.get("keep_partitions")), job_key=spec["job_key"],
                        timeout_s=timeout_ms / 1000)
    crash_after = spec.get("fault", {}).get("crash_first_attempt_after")

    def write(batches):
        import pyarrow as pa

        context = TaskContext.get()
        crash = crash_after if context.partitionId() == 0 and context.attemptNumber() == 0 else None
        read = 0

        def passing():
            # Arrow batches cross from the JVM as columns; a column to Python objects at once is far cheaper
            # than pickled rows, one object per field.
            nonlocal read
            for batch in batches:
                read += batch.num_rows
                keys, values, headers, partitions, keeps = (batch.column(i).to_pylist() for i in range(5))
                for key, value, header, partition, kept in zip(keys, values, headers, partitions, keeps):
                    if kept:
                        yield key, value, header_pairs(header) if header else None, partition

        chosen = passing()
        written = write_task(chosen, target, context.partitionId(), crash_after=crash)
        for _ in chosen:  # an earlier attempt had committed: the rest still counts as read
            pass
        yield pa.RecordBatch.from_pydict({"read": [read], "written": [written]},
                                         schema=pa.schema([("read", pa.int64()), ("written", pa.int64())]))

    # Headers as one JSON text (values in base64), null when a record has none: Spark's Arrow writer is several
    # times slower on an array of structs, even an empty one, than on a string column.
    headers = F.when(F.size("headers") > 0, F.to_json("headers"))
    if keep is None:
        frame = records.select(F.col("raw_key").alias("key"), F.col("raw_value").alias("value"),
                               headers.alias("headers"), "partition", F.lit(True).alias("keep"))
    else:
        frame = records.select(*(F.when(keep, column).alias(name) for column, name in (
                                   (F.col("raw_key"), "key"), (F.col("raw_value"), "value"), (headers, "headers"))),
                               "partition", F.coalesce(keep, F.lit(False)).alias("keep"))
    tasks = frame.rdd.getNumPartitions()
    try:
        counts = frame.mapInArrow(write, "read long, written long").collect()
    except Exception:
        fence_tasks(target, tasks)
        raise
    forget_tasks(target, tasks)
    return sum(r["read"] for r in counts), sum(r["written"] for r in counts)


def header_pairs(text: str) -> list[tuple[str, bytes | None]]:
    """A record's headers from the JSON Spark's to_json made of them (binary values in base64, nulls left out)."""
    return [(h["key"], None if h.get("value") is None else base64.b64decode(h["value"])) for h in json.loads(text)]


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


def write_decoded_jsonl(spark: SparkSession, records, keep, decode, out: str) -> tuple[int, int]:
    """JSON lines with decoded values as JSON (not strings) and the schema each was read with; returns (read,
    written), counted by the tasks (Spark applies a result task's accumulator updates once, even if retried)."""
    read_total, written_total = spark.sparkContext.accumulator(0), spark.sparkContext.accumulator(0)

    def lines(rows):
        read = written = 0
        for row in rows:
            read += 1
            if row["keep"]:
                written += 1
                yield line(row)
        read_total.add(read)
        written_total.add(written)

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

    keep = F.lit(True) if keep is None else F.coalesce(keep, F.lit(False))
    records.select("topic", "partition", "offset", "timestamp", "raw_key", "raw_value", "headers",
                   keep.alias("keep")).rdd.mapPartitions(lines).saveAsTextFile(out)
    return read_total.value, written_total.value


def wire_schema_id(column: str):
    """The schema id of a value in the registry's wire format (magic byte 0, 4-byte big-endian id), else null."""
    raw = F.col(column)
    return F.when((F.length(raw) >= 5) & (F.substring(raw, 1, 1) == F.lit(bytes([0]))),
                  F.conv(F.hex(F.substring(raw, 2, 4)), 16, 10).cast("int"))


def typed_columns(spark: SparkSession, records, registry: dict, timeout_s: float) -> list:
    """key and value as typed columns for the Avro and Protobuf schemas the range uses.

    One replay, one Parquet schema per side, so one reader schema: the Avro or Protobuf schema with the highest id
    among the range's records (the newest, as registries number them) decides. Avro records are decoded with their
    own writer schema and resolved to the reader's by Avro's rules (Spark's from_avro); Protobuf records of the
    reader's message type are parsed with the reader's descriptor, which is how Protobuf resolves versions (by
    field number). Whatever else the side holds (plain bytes, JSON Schema, the other format, another message type,
    a record that does not parse) keeps its bytes in `key_bytes` / `value_bytes`; `key_schema_id` /
    `value_schema_id` say which schema each record was written with. Finding the ids reads the range once more
    (Protobuf: and once more for the message types)."""
    from confluent_kafka.schema_registry import SchemaRegistryClient

    ids = records.select(wire_schema_id("raw_key").alias("k"), wire_schema_id("raw_value").alias("v")).distinct()
    found = {"key": set(), "value": set()}
    for row in ids.collect():
        for side, schema_id in (("key", row["k"]), ("value", row["v"])):
            if schema_id is not None:
                found[side].add(schema_id)
    client = SchemaRegistryClient({**registry.get("config", {}), "url": registry["url"]})
    schemas = {i: client.get_schema(i) for i in found["key"] | found["value"]}
    columns = []
    for side in ("key", "value"):
        raw, schema_id = F.col(f"raw_{side}"), wire_schema_id(f"raw_{side}")
        kinds = {i: schemas[i].schema_type or "AVRO" for i in found[side]}
        typed_ids = [i for i in found[side] if kinds[i] in ("AVRO", "PROTOBUF")]
        typed = None
        if typed_ids and kinds[max(typed_ids)] == "AVRO":
            typed = avro_column(side, {i: schemas[i].schema_str for i in typed_ids if kinds[i] == "AVRO"})
        elif typed_ids:
            typed = protobuf_column(records, side, sorted(i for i in typed_ids if kinds[i] == "PROTOBUF"), registry,
                                    timeout_s)
        if typed is None:
            columns += [raw.alias(side), schema_id.alias(f"{side}_schema_id")]
        else:
            columns += [typed.alias(side), schema_id.alias(f"{side}_schema_id"),
                        F.when(typed.isNull(), raw).alias(f"{side}_bytes")]
    return columns


def avro_column(side: str, writers: dict[int, str]):
    """Each record decoded with its writer schema (by id) and resolved to the newest one's."""
    from pyspark.sql.avro.functions import from_avro

    schema_id, body = wire_schema_id(f"raw_{side}"), F.expr(f"substring(raw_{side}, 6)")
    reader = writers[max(writers)]
    typed = None
    for i in sorted(writers):
        decoded = from_avro(body, writers[i], {"avroSchema": reader, "mode": "PERMISSIVE"})
        typed = F.when(schema_id == i, decoded) if typed is None else typed.when(schema_id == i, decoded)
    return typed


def protobuf_column(records, side: str, ids: list[int], registry: dict, timeout_s: float):
    """Protobuf records of the reader's message type as a struct column (protobuf_rows, shipped to the
    executors), or None when none of the schemas can be read. Records of other message types keep their bytes; the
    descriptors travel with the tasks, so executors never ask the registry."""
    import protobuf_rows
    from console.kafka.registry import registry_codec
    from console.kafka.types import ClusterConnection

    def header(raw):
        found = protobuf_rows.wire_header(None if raw is None else bytes(raw))
        return None if found is None else [found[0], *found[1]]

    raw = F.col(f"raw_{side}")
    used = (records.where(wire_schema_id(f"raw_{side}").isin(ids))
            .select(F.udf(header, "array<int>")(raw).alias("h")).groupBy("h").count().collect())
    codec = registry_codec(ClusterConnection("replay", "", registry_url=registry["url"],
                                             registry_config=registry.get("config", {})), timeout=timeout_s)
    names = {}
    for row in used:
        if row["h"]:
            key = (row["h"][0], tuple(row["h"][1:]))
            try:
                names[key] = (codec.protobuf_descriptor(*key), row["count"])
            except Exception:  # noqa: BLE001
                continue  # a schema that does not compile, or indexes it does not have: those records keep bytes
    if not names:
        return None
    # The topic's main type: the message type most of the range's records use (ties to the newest schema), read
    # with its descriptor in the newest schema that has it.
    totals: dict[str, list[int]] = {}
    for (schema_id, _), (descriptor, count) in names.items():
        total = totals.setdefault(descriptor.full_name, [0, 0])
        total[0], total[1] = total[0] + count, max(total[1], schema_id)
    name = max(totals, key=lambda n: (*totals[n], n))
    reader = max(((key, descriptor) for key, (descriptor, _) in names.items() if descriptor.full_name == name),
                 key=lambda entry: entry[0])[1]
    accepted = frozenset(key for key, (descriptor, _) in names.items() if descriptor.full_name == name)
    files = tuple(protobuf_rows.serialized_files(reader.file))

    def decode(value):
        found = protobuf_rows.wire_header(None if value is None else bytes(value))
        if found is None or found[:2] not in accepted:
            return None
        try:
            message = protobuf_rows.message_class(files, name).FromString(bytes(value)[found[2]:])
            return protobuf_rows.to_row(message)
        except Exception:  # noqa: BLE001 - bytes that do not parse (or a timestamp past year 9999) keep their bytes
            return None

    return F.udf(decode, protobuf_rows.column_type(reader))(raw)


def list_files(spark: SparkSession, out: str) -> list[str]:
    """The part files written, through Hadoop's file system (a local folder or an object store alike)."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(out)
    statuses = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).listStatus(path)
    names = sorted(str(status.getPath().toString()) for status in statuses
                   if status.getPath().getName().startswith("part-"))
    return [name.removeprefix("file:") if name.startswith("file:/") else name for name in names]


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


def job_group(spec: dict) -> str:
    return f"console-replay-{spec['job_id']}"


def run(spark: SparkSession, spec: dict, emit) -> dict:
    """Runs one replay in `spark` (the caller has set the thread's job group to job_group(spec)) and returns its
    result; `emit(kind, payload)` reports progress."""
    source, sink, topic = spec["source"], spec["sink"], spec["topic"]
    ranges = {int(p): (s, e) for p, (s, e) in spec["ranges"].items() if e > s}
    planned = sum(e - s for s, e in ranges.values())
    started = time.perf_counter()
    emit("PROGRESS", {"done": 0})
    # s3a keys: in the driver's configuration, not on a command line. They are the same for every replay of a
    # driver (its worker's environment), which matters because Hadoop caches a file system per bucket.
    for name, value in sink.get("hadoop", {}).items():
        spark.sparkContext._jsc.hadoopConfiguration().set(name, value)
    stop = threading.Event()
    threading.Thread(target=report_progress, args=(spark, job_group(spec), planned, emit, stop), daemon=True).start()
    try:
        result = _replay(spark, spec, source, sink, topic, ranges, planned)
    finally:
        stop.set()
    emit("PROGRESS", {"done": planned})
    return {**result, "processing_s": round(time.perf_counter() - started, 3)}


def _replay(spark: SparkSession, spec: dict, source: dict, sink: dict, topic: str, ranges: dict,
            planned: int) -> dict:
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

    # Kafka partitions split into several Spark tasks each, so both cores work and progress moves.
    split = max(len(ranges), task_count(spark, planned))
    records = (source_frame(isolation, split).load()
               .withColumnRenamed("key", "raw_key").withColumnRenamed("value", "raw_value"))
    registry = spec.get("registry")
    decode = registry_decoder(topic, registry, timeout_ms / 1000) if registry else None
    needs_text = bool(spec.get("filter")) or (sink["kind"] == "jsonl" and decode is None)
    if needs_text:  # key and value as text only where the filter or the JSON-lines sink reads them
        if decode is not None:
            records = with_decoded_columns(records, decode)
        else:
            records = records.withColumn("key", F.col("raw_key").cast("string")) \
                .withColumn("value", F.col("raw_value").cast("string"))
    keep = F.expr(spec["filter"]) if spec.get("filter") else None
    files: list[str] = []
    if sink["kind"] == "topic":
        read, written = write_topic(records, keep, sink, spec, timeout_ms)
    elif sink["kind"] == "jsonl" and decode is not None:
        read, written = write_decoded_jsonl(spark, records, keep, decode, sink["path"])
    else:
        columns = (typed_columns(spark, records, registry, timeout_ms / 1000) if sink.get("typed") and registry
                   else [F.col("raw_key").alias("key"), F.col("raw_value").alias("value")])
        # Observation names are the job's own: other replays may run in the same session.
        records, read_seen = counted(records, f"read-{spec['job_id']}")
        chosen, written_seen = counted(records.where(keep) if keep is not None else records,
                                       f"written-{spec['job_id']}")
        if sink["kind"] == "parquet":
            frame = chosen.select("topic", "partition", "offset", "timestamp", *columns, "headers")
            frame.write.mode("errorifexists").parquet(sink["path"])
        else:
            frame = chosen.selectExpr("topic", "partition", "offset", "timestamp", "key", "value",
                                      "transform(headers, h -> named_struct('key', h.key, 'value', "
                                      "CAST(h.value AS STRING))) AS headers")
            frame.write.mode("errorifexists").json(sink["path"])
        read, written = read_seen.get["rows"], written_seen.get["rows"]
    if sink["kind"] != "topic":
        files = list_files(spark, sink["path"])
    aborted, markers = offsets_without_records(read, planned, isolation,
                                              lambda: read_count(source_frame("read_uncommitted", split)))
    return {"read": read, "written": written, "files": files, "aborted": aborted, "markers": markers}


def main(spec_path: str) -> None:
    """One replay in a Spark application of its own (the resident driver, jobs/driver.py, is how the console
    runs them): handy to run a spec by hand with spark-submit."""
    spec = json.loads(Path(spec_path).read_text())
    spark = SparkSession.builder.appName(job_group(spec)).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    spark.sparkContext.setJobGroup(job_group(spec), "replay", interruptOnCancel=True)
    print_line("RESULT", run(spark, spec, print_line))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
