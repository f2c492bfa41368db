"""Protobuf messages as typed rows: a message descriptor's column type (Spark DDL) and a parsed message's value
in that shape. Pure Python on google.protobuf, so Spark's executors run it without Django; Maven Central has no
spark-protobuf for Spark 4, so typed Parquet of Protobuf records is built here.

Field numbers, not names, carry Protobuf's compatibility: a record written with an older (or newer) version of a
message parses with the reader's descriptor, unknown fields dropped and missing ones at their defaults, exactly as
a Protobuf consumer would read it. Scalars without presence (proto3's plain fields) keep their default values, as
every Protobuf reader sees them; fields with presence (messages, `optional`, oneof members) are null when unset."""

from __future__ import annotations

import datetime
import decimal
import functools
import json

from google.protobuf import descriptor_pb2, json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message_factory import GetMessageClass

F = FieldDescriptor
_SCALARS = {
    F.TYPE_DOUBLE: "double", F.TYPE_FLOAT: "float", F.TYPE_INT32: "int", F.TYPE_SINT32: "int",
    F.TYPE_SFIXED32: "int", F.TYPE_INT64: "bigint", F.TYPE_SINT64: "bigint", F.TYPE_SFIXED64: "bigint",
    # Unsigned values do not fit the signed type of their width.
    F.TYPE_UINT32: "bigint", F.TYPE_FIXED32: "bigint", F.TYPE_UINT64: "decimal(20,0)", F.TYPE_FIXED64: "decimal(20,0)",
    F.TYPE_BOOL: "boolean", F.TYPE_STRING: "string", F.TYPE_BYTES: "binary", F.TYPE_ENUM: "string",
}
_WRAPPERS = {f"google.protobuf.{name}Value": kind for name, kind in (
    ("Double", "double"), ("Float", "float"), ("Int64", "bigint"), ("UInt64", "decimal(20,0)"), ("Int32", "int"),
    ("UInt32", "bigint"), ("Bool", "boolean"), ("String", "string"), ("Bytes", "binary"))}
# Free-form JSON in Protobuf's clothes: it has no fixed shape, so it stays JSON text.
_AS_JSON = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"}
TIMESTAMP = "google.protobuf.Timestamp"


def column_type(message: Descriptor) -> str:
    """The Spark DDL type of a message's rows, e.g. struct<`id`:string,`cents`:bigint>."""
    return _message_type(message, (message.full_name,))


def _message_type(message: Descriptor, seen: tuple[str, ...]) -> str:
    if not message.fields:
        return "boolean"  # Parquet cannot hold an empty struct: a field-less message is there or not
    return "struct<" + ",".join(f"`{f.name}`:{_field_type(f, seen)}" for f in message.fields) + ">"


def _field_type(field: FieldDescriptor, seen: tuple[str, ...]) -> str:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        key, value = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
        return f"map<{_single_type(key, seen)},{_single_type(value, seen)}>"
    single = _single_type(field, seen)
    return f"array<{single}>" if field.is_repeated else single


def _single_type(field: FieldDescriptor, seen: tuple[str, ...]) -> str:
    message = field.message_type
    if message is None:
        return _SCALARS[field.type]
    name = message.full_name
    if name == TIMESTAMP:
        return "timestamp"
    if name in _WRAPPERS:
        return _WRAPPERS[name]
    if name in _AS_JSON or name in seen:
        return "string"  # a message that contains itself has no finite column type: its JSON instead
    return _message_type(message, (*seen, name))


def to_row(message) -> object:
    """The parsed message as column_type() describes it: dicts for structs, lists, dicts for maps."""
    return _message_value(message, (message.DESCRIPTOR.full_name,))


def _message_value(message, seen: tuple[str, ...]) -> object:
    descriptor = message.DESCRIPTOR
    if not descriptor.fields:
        return True
    row = {}
    for field in descriptor.fields:
        value = getattr(message, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            row[field.name] = {k: _single_value(value_field, v, seen) for k, v in value.items()}
        elif field.is_repeated:
            row[field.name] = [_single_value(field, item, seen) for item in value]
        elif field.has_presence and not message.HasField(field.name):
            row[field.name] = None
        else:
            row[field.name] = _single_value(field, value, seen)
    return row


def _single_value(field: FieldDescriptor, value, seen: tuple[str, ...]) -> object:
    message = field.message_type
    if message is None:
        if field.type == F.TYPE_ENUM:
            known = field.enum_type.values_by_number.get(value)
            return known.name if known is not None else str(value)  # an open enum's number this schema lacks
        if field.type in (F.TYPE_UINT64, F.TYPE_FIXED64):
            return decimal.Decimal(value)
        if field.type == F.TYPE_BYTES:
            return bytes(value)
        return value
    name = message.full_name
    if name == TIMESTAMP:
        return datetime.datetime.fromtimestamp(value.seconds, tz=datetime.UTC) + datetime.timedelta(
            microseconds=value.nanos // 1000)
    if name in _WRAPPERS:
        return _single_value(message.fields_by_name["value"], value.value, seen)
    if name in _AS_JSON or name in seen:
        # Sorted keys: Protobuf maps (a Struct is one) iterate in no fixed order, and the same record must give the
        # same text every time.
        return json.dumps(json_format.MessageToDict(value, preserving_proto_field_name=True), ensure_ascii=False,
                          separators=(",", ":"), sort_keys=True)
    return _message_value(value, (*seen, name))


# -- the registry's wire format and descriptors shipped to executors -------------------------------------------


def wire_header(data: bytes | None) -> tuple[int, tuple[int, ...], int] | None:
    """(schema id, message indexes, where the payload starts) of a Protobuf record in the registry's wire format:
    magic byte 0, 4-byte id, then a zig-zag varint count and that many indexes (a lone 0 meaning [0]); None when
    the bytes are not framed so."""
    if not data or len(data) < 6 or data[0] != 0:
        return None
    schema_id, position = int.from_bytes(data[1:5], "big"), 5
    indexes = []
    count, position = _zigzag(data, position)
    if count < 0 or count > 64:
        return None
    for _ in range(count):
        index, position = _zigzag(data, position)
        if index < 0:
            return None
        indexes.append(index)
    return schema_id, tuple(indexes or [0]), position


def _zigzag(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            return -1, len(data)
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), position


def serialized_files(file) -> list[bytes]:
    """A file descriptor and everything it imports, dependencies first, as serialized FileDescriptorProtos."""
    ordered: list[bytes] = []
    done: set[str] = set()

    def add(current) -> None:
        if current.name in done:
            return
        done.add(current.name)
        for dependency in current.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        current.CopyToProto(proto)
        ordered.append(proto.SerializeToString())

    add(file)
    return ordered


@functools.lru_cache(maxsize=16)
def message_class(files: tuple[bytes, ...], full_name: str):
    """The message class named full_name, from serialized_files() output, in a pool of its own (built once per
    Python worker and reader, not per record)."""
    pool = DescriptorPool()
    for data in files:
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(data))
    return GetMessageClass(pool.FindMessageTypeByName(full_name))
