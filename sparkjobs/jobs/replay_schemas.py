"""A replay's records read through the schema registry: decoded to JSON for filters and JSON lines, and typed
Parquet columns from the range's Avro and Protobuf schemas. Runs in Spark as the top-level module
`replay_schemas` (shipped with --py-files, see sparkjobs/runner.py); no Django."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

if TYPE_CHECKING:
    from replay_spec import Registry


def registry_decoder(topic: str, registry: Registry, timeout_s: float):
    """decode(raw, is_key) -> (JSON-able value or text, schema dict or None), in the executors: records in the
    registry's wire format through confluent-kafka's deserializers (gateway.kafka.schema_registry, shipped with
    --py-files), everything else as UTF-8 text, as Spark's cast would show it."""

    # Plain values in the closure: it is pickled to the executors.
    url, config = registry.url, dict(registry.config)

    def decode(raw, is_key: bool):
        if raw is None:
            return None, None
        data = bytes(raw)
        if len(data) >= 5 and data[0] == 0:
            from gateway.kafka.schema_registry import registry_codec
            from gateway.kafka.types import ClusterConnection

            connection = ClusterConnection("replay", "", registry_url=url, registry_config=config)
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


def wire_schema_id(column: str):
    """The schema id of a value in the registry's wire format (magic byte 0, 4-byte big-endian id), else null."""
    raw = F.col(column)
    return F.when((F.length(raw) >= 5) & (F.substring(raw, 1, 1) == F.lit(bytes([0]))),
                  F.conv(F.hex(F.substring(raw, 2, 4)), 16, 10).cast("int"))


def typed_columns(spark: SparkSession, records, registry: Registry, timeout_s: float) -> list:
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
    client = SchemaRegistryClient({**registry.config, "url": registry.url})
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


def protobuf_column(records, side: str, ids: list[int], registry: Registry, timeout_s: float):
    """Protobuf records of the reader's message type as a struct column (protobuf_rows, shipped to the
    executors), or None when none of the schemas can be read. Records of other message types keep their bytes; the
    descriptors travel with the tasks, so executors never ask the registry."""
    import protobuf_rows
    from gateway.kafka.schema_registry import registry_codec
    from gateway.kafka.types import ClusterConnection

    def header(raw):
        found = protobuf_rows.wire_header(None if raw is None else bytes(raw))
        return None if found is None else [found[0], *found[1]]

    raw = F.col(f"raw_{side}")
    used = (records.where(wire_schema_id(f"raw_{side}").isin(ids))
            .select(F.udf(header, "array<int>")(raw).alias("h")).groupBy("h").count().collect())
    codec = registry_codec(ClusterConnection("replay", "", registry_url=registry.url,
                                             registry_config=dict(registry.config)), timeout=timeout_s)
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


