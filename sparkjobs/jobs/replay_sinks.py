"""Where a replay's records go, beside Spark's own Parquet and JSON writers: a Kafka topic (exactly once, through
spark_sink) and JSON lines of registry-decoded records. Runs in Spark as the top-level module `replay_sinks`
(shipped with --py-files, see sparkjobs/runner.py); no Django."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

if TYPE_CHECKING:
    from replay_spec import ReplaySpec, TopicSink


def write_topic(records, keep, sink: TopicSink, spec: ReplaySpec, timeout_ms: int) -> tuple[int, int]:
    """Exactly once for read_committed readers: each task writes in a transaction of its own (see spark_sink).
    `keep` is the filter as a column (or None): every record reaches its task, which counts what it read and what
    passed, so the range is read once; a record the filter drops crosses without its key, value and headers.
    Returns (read, written)."""
    from pyspark import TaskContext

    from spark_sink import SinkTarget, fence_tasks, forget_tasks, write_task

    target = SinkTarget(bootstrap=sink.bootstrap, config=sink.config, topic=sink.topic,
                        keep_partitions=sink.keep_partitions, job_key=spec.job_key,
                        timeout_s=timeout_ms / 1000)
    crash_after = spec.crash_first_attempt_after

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


def plain_decoder(registry_decode=None):
    """decode(raw, is_key) when lines are masked: the registry's decoding where it has one, else JSON objects
    and arrays as JSON (so JSON-path rules reach their fields, as on the pages), anything else as UTF-8 text."""

    def decode(raw, is_key: bool):
        if raw is None:
            return None, None
        from mask_rules import HIDDEN_VALUE

        data = bytes(raw)
        if registry_decode is not None:
            value, schema = registry_decode(raw, is_key)
            if schema is not None:
                return value, schema
            if len(data) >= 5 and data[0] == 0:
                return HIDDEN_VALUE, None  # the registry's format, not decoded: its bytes could hold anything
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return HIDDEN_VALUE, None  # binary a rule cannot look into is not written out (pages hide it too)
        body = text.removeprefix("\ufeff")  # a byte-order mark does not stop a JSON value being JSON to the rules
        if body.lstrip()[:1] in ("{", "["):
            try:
                return json.loads(body), None
            except ValueError:
                pass
        return text, None

    return decode


def _masker(mask):
    """The page's masking, built in the executor from the rules the job carries (None: not masked)."""
    if mask is None:
        return None
    from mask_rules import Masker, Rule

    from gateway.user_regex import compile_user_regex

    rules, key = mask
    return Masker([Rule(**rule) for rule in rules], hash_key=key.encode() if key else None,
                  compile_regex=compile_user_regex)


def decoded_record(row, decode, masker) -> dict:
    """One record as a JSON-lines replay writes it: decoded key and value, headers as text, masked when `masker`."""
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
    if masker is not None:
        masked = masker.record({**record, "headers": [[h["key"], h["value"]] for h in record["headers"]]})
        record.update(key=masked["key"], value=masked["value"],
                      headers=[{"key": name, "value": text} for name, text in masked["headers"]])
    return record


def _decoded_rows(spark: SparkSession, records, keep, decode, mask, shape):
    """(rdd of shape(record, row) for the kept rows, read accumulator, written accumulator): both writers below
    decode and mask in the executors, counting what they read and kept (Spark applies a result task's
    accumulator updates once, even if retried)."""
    read_total, written_total = spark.sparkContext.accumulator(0), spark.sparkContext.accumulator(0)

    def each(rows):
        masker = _masker(mask)
        read = written = 0
        for row in rows:
            read += 1
            if row["keep"]:
                written += 1
                yield shape(decoded_record(row, decode, masker), row)
        read_total.add(read)
        written_total.add(written)

    keep = F.lit(True) if keep is None else F.coalesce(keep, F.lit(False))
    rdd = records.select("topic", "partition", "offset", "timestamp", "raw_key", "raw_value", "headers",
                         keep.alias("keep")).rdd.mapPartitions(each)
    return rdd, read_total, written_total


def write_decoded_jsonl(spark: SparkSession, records, keep, decode, out: str, mask=None) -> tuple[int, int]:
    """JSON lines with decoded values as JSON (not strings) and the schema each was read with; returns (read,
    written). `mask`: (rules, hash key) of masking.mask_rules, applied to each line before it is written."""
    rdd, read, written = _decoded_rows(spark, records, keep, decode, mask,
                                       lambda record, _row: json.dumps(record, ensure_ascii=False))
    rdd.saveAsTextFile(out)
    return read.value, written.value


def _text(value) -> str | None:
    return value if value is None or isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def write_masked_parquet(spark: SparkSession, records, keep, decode, out: str, mask) -> tuple[int, int]:
    """Parquet for a reader that masking rules apply to: the same masked records as a JSON-lines replay writes,
    with key, value and headers as text (decoded values as JSON text), never the raw bytes."""
    from pyspark.sql.types import (ArrayType, IntegerType, LongType, StringType, StructField, StructType,
                                   TimestampType)

    schema = StructType([
        StructField("topic", StringType()), StructField("partition", IntegerType()),
        StructField("offset", LongType()), StructField("timestamp", TimestampType()),
        StructField("key", StringType()), StructField("value", StringType()),
        StructField("headers", ArrayType(StructType([StructField("key", StringType()),
                                                     StructField("value", StringType())])))])

    def shape(record, row):
        return (record["topic"], record["partition"], record["offset"], row["timestamp"], _text(record["key"]),
                _text(record["value"]), [(h["key"], h["value"]) for h in record["headers"]])

    rdd, read, written = _decoded_rows(spark, records, keep, decode, mask, shape)
    spark.createDataFrame(rdd, schema).write.mode("errorifexists").parquet(out)
    return read.value, written.value
