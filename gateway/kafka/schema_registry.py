"""The schema registry face: decodes and encodes records in Confluent's wire format (magic byte 0, a 4-byte schema
id, for Protobuf the message indexes, then the payload) with confluent-kafka's own serializers.

Only HTTP crosses here (no librdkafka), so it runs wherever records are: the web process for the browser and
produce, the cluster's client process for a search whose filters look at decoded fields. One codec per registry
settings is kept per process with the client's caches, so a scan asks the registry once per schema id."""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
import json
import re
import tempfile
import threading
import time
import uuid
from pathlib import Path

from confluent_kafka.schema_registry import (
    Schema, SchemaRegistryClient, SchemaRegistryError, dual_schema_id_deserializer,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.common.protobuf import _init_pool, _str_to_proto
from confluent_kafka.schema_registry.common.serde import SchemaId
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError
from google.protobuf import descriptor_pb2, json_format
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import DecodeError
from google.protobuf.message_factory import GetMessageClass
from jsonschema import ValidationError

from gateway.kafka.errors import RegistryError
from gateway.kafka.json_schema_checks import re2_validator
from gateway.kafka.types import ClusterConnection, DecodedPart, SchemaInfo, SubjectInfo

KINDS = {"AVRO": "avro", "PROTOBUF": "protobuf", "JSON": "json-schema"}
DOWN_MEMORY_S = 10.0  # after a registry failed to answer, records decode as hex for this long without asking
MSG_NO_REGISTRY = "Cluster '{cluster}' has no schema registry."
MSG_UNREACHABLE = "The schema registry at {url} did not answer: {reason}"
MAIN_PROTO = "registry_schema.proto"
MSG_UNKNOWN_ID = "schema id {schema_id} is not in the registry ({reason})"
MSG_BAD_REFERENCE = ("the schema refers to {name!r}, which is not a relative file name (letters, digits, '_', '-', "
                     "'.' in segments separated by '/', no '..', no leading '.'): refused, nothing written")
MSG_TOO_MANY_REFERENCES = "the schema's references go past {limit} files or {depth} levels: refused"
MAX_REFERENCE_NAME = 255
MAX_REFERENCES = 200
MAX_REFERENCE_DEPTH = 20
_REFERENCE_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


def _field(is_key: bool) -> str:
    return MessageField.KEY if is_key else MessageField.VALUE


def jsonable(value: object) -> object:
    """What Avro and Protobuf hand back, as JSON can hold it: bytes as base64 (Avro's JSON encoding would need the
    schema to read back; base64 is what Protobuf's own JSON mapping uses), decimals and times as strings."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    return value


class RegistryCodec:
    """One registry's client, deserializers and schema lookups. Thread-safe enough for its callers: the client
    and the deserializers keep their own caches; a lost race only repeats a lookup."""

    def __init__(self, connection: ClusterConnection, timeout: float) -> None:
        if not connection.registry_url:
            raise RegistryError(MSG_NO_REGISTRY.format(cluster=connection.name), cluster=connection.name)
        self.cluster, self.url, self.timeout = connection.name, connection.registry_url, timeout
        self.client = SchemaRegistryClient({**connection.registry_config, "url": connection.registry_url,
                                            "timeout": timeout, "max.retries": 0})
        self._avro = AvroDeserializer(self.client)
        # Decoding reads, it does not gate: validating would run the schema's patterns (chosen by whoever writes to
        # the registry) on every record a viewer looks at.
        self._json = JSONDeserializer(None, schema_registry_client=self.client, conf={"validate": False})
        self._infos: dict[tuple[int, str], SchemaInfo] = {}
        self._protobuf: dict[int, tuple[DescriptorPool, object]] = {}
        self._down: tuple[float, str] | None = None

    # -- reads of the registry ------------------------------------------------------------------------------

    def _ask(self, call, *args, **kwargs):
        """One registry request: unreachable and refused answers become RegistryError with the registry's words."""
        try:
            return call(*args, **kwargs)
        except SchemaRegistryError as exc:
            raise RegistryError(f"{exc.error_message} (HTTP {exc.http_status_code})", cluster=self.cluster,
                                code=str(exc.error_code), status=exc.http_status_code) from exc
        except (OSError, ValueError, TypeError) as exc:
            raise RegistryError(MSG_UNREACHABLE.format(url=self.url, reason=exc), cluster=self.cluster,
                                code="unreachable") from exc
        except Exception as exc:  # httpx's transport errors do not share a base with OSError
            if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "h11"):
                raise RegistryError(MSG_UNREACHABLE.format(url=self.url, reason=exc or type(exc).__name__),
                                    cluster=self.cluster, code="unreachable") from exc
            raise

    def subjects(self) -> list[SubjectInfo]:
        found = []
        for subject in sorted(self._ask(self.client.get_subjects)):
            latest = self._ask(self.client.get_latest_version, subject)
            found.append(SubjectInfo(subject=subject, latest_version=latest.version, schema_id=latest.schema_id,
                                     schema_type=latest.schema.schema_type or "AVRO"))
        return found

    def versions(self, subject: str) -> list[int]:
        return list(self._ask(self.client.get_versions, subject))

    def schema(self, subject: str, version: int | None = None) -> SchemaInfo:
        found = (self._ask(self.client.get_latest_version, subject) if version is None
                 else self._ask(self.client.get_version, subject, version))
        return SchemaInfo(schema_id=found.schema_id, schema_type=found.schema.schema_type or "AVRO",
                          subject=found.subject or subject, version=found.version, text=found.schema.schema_str)

    def schema_by_id(self, schema_id: int, *, topic: str = "", is_key: bool = False) -> SchemaInfo:
        """The schema with its subject and version: the topic's own subject if the id is registered under it."""
        key = (schema_id, f"{topic}-{'key' if is_key else 'value'}")
        if key in self._infos:
            return self._infos[key]
        schema = self._ask(self.client.get_schema, schema_id)
        subject, version = "", None
        try:
            pairs = [(sv.subject, sv.version) for sv in self._ask(self.client.get_schema_versions, schema_id)]
        except RegistryError:
            pairs = []  # registries without /schemas/ids/{id}/versions: the id alone still decodes
        if pairs:
            subject, version = next(((s, v) for s, v in pairs if s == key[1]), pairs[0])
        info = SchemaInfo(schema_id=schema_id, schema_type=schema.schema_type or "AVRO", subject=subject,
                          version=version, text=schema.schema_str)
        self._infos[key] = info
        return info

    # -- decoding ---------------------------------------------------------------------------------------------

    def decode(self, topic: str, data: bytes | None, *, is_key: bool = False) -> DecodedPart | None:
        """The record's key or value decoded through the registry; None when it is not in the wire format (then
        the caller shows it as JSON, text or hex). A framed record that cannot be decoded comes back as
        kind "hex" with the reason, never as an exception."""
        if not data or len(data) < 5 or data[0] != 0:
            return None
        schema_id = int.from_bytes(data[1:5], "big")
        if self._down and time.monotonic() - self._down[0] < DOWN_MEMORY_S:
            return DecodedPart("hex", None, error=self._down[1])
        try:
            info = self.schema_by_id(schema_id, topic=topic, is_key=is_key)
        except RegistryError as exc:
            if exc.code == "unreachable":
                self._down = (time.monotonic(), exc.message)
                return DecodedPart("hex", None, error=exc.message)
            return DecodedPart("hex", None, error=MSG_UNKNOWN_ID.format(schema_id=schema_id, reason=exc.message))
        self._down = None
        kind = KINDS.get(info.schema_type, info.schema_type.lower())
        ctx = SerializationContext(topic, _field(is_key))
        try:
            if kind == "avro":
                value = jsonable(self._avro(data, ctx))
            elif kind == "json-schema":
                value = self._json(data, ctx)
            elif kind == "protobuf":
                value = self._decode_protobuf(data, schema_id)
            else:
                return DecodedPart("hex", None, schema=info, error=f"schema type {info.schema_type} is not supported")
        except (SerializationError, DecodeError, ValueError, TypeError, KeyError, IndexError, EOFError,
                StopIteration, RecursionError) as exc:
            return DecodedPart("hex", None, schema=info,
                               error=f"not a valid {kind} record for schema {schema_id}: {exc or type(exc).__name__}")
        except RegistryError as exc:
            return DecodedPart("hex", None, schema=info, error=exc.message)
        return DecodedPart(kind, value, schema=info)

    def _protobuf_pool(self, schema_id: int) -> tuple[DescriptorPool, object]:
        """The writer's file descriptor in a pool of its own, with the well-known types and the schema's
        references. Registries hand a Protobuf schema back either as a serialized FileDescriptorProto (what
        Confluent's clients register, and Confluent's registry gives on request) or as .proto text (what others
        register; Apicurio returns schemas as registered), which protoc compiles."""
        if schema_id not in self._protobuf:
            schema = self._ask(self.client.get_schema, schema_id, None, "serialized")
            files: dict[str, str] = {}
            self._protobuf_references(schema, files)
            pool = DescriptorPool()
            _init_pool(pool)
            main = _serialized_descriptor(schema.schema_str)
            if main is not None and all(_serialized_descriptor(text) is not None for text in files.values()):
                for name, text in files.items():
                    pool.Add(_str_to_proto(name, text))
                pool.Add(main)
                name = main.name
            else:
                name = _compile_proto(schema.schema_str, files, pool)
            self._protobuf[schema_id] = (pool, pool.FindFileByName(name))
        return self._protobuf[schema_id]

    def _protobuf_references(self, schema: Schema, files: dict[str, str], depth: int = 0) -> None:
        """Referenced files, depth first, by the import name the schema uses. A name is the registry's word, so
        it must be a plain relative file name (it becomes a file for protoc), and the references are bounded."""
        if depth > MAX_REFERENCE_DEPTH:
            raise ValueError(MSG_TOO_MANY_REFERENCES.format(limit=MAX_REFERENCES, depth=MAX_REFERENCE_DEPTH))
        for ref in schema.references or ():
            check_reference_name(ref.name)
            if ref.name in files or ref.name.startswith("google/protobuf/"):
                continue
            if len(files) >= MAX_REFERENCES:
                raise ValueError(MSG_TOO_MANY_REFERENCES.format(limit=MAX_REFERENCES, depth=MAX_REFERENCE_DEPTH))
            files[ref.name] = ""  # taken: a reference back to it does not fetch it again
            found = self._ask(self.client.get_version, ref.subject, ref.version, True, "serialized")
            self._protobuf_references(found.schema, files, depth + 1)
            files[ref.name] = found.schema.schema_str

    def protobuf_descriptor(self, schema_id: int, indexes: list[int] | tuple[int, ...]):
        """The message descriptor a Protobuf record's message indexes name in its schema."""
        _, file = self._protobuf_pool(schema_id)
        descriptor = list(file.message_types_by_name.values())[indexes[0]]
        for index in indexes[1:]:
            # Confluent's serializers count the messages a .proto declares, not the entries protoc adds for maps.
            declared = [t for t in descriptor.nested_types if not t.GetOptions().map_entry]
            descriptor = declared[index]
        return descriptor

    def _protobuf_message(self, schema_id: int, indexes: list[int]):
        return GetMessageClass(self.protobuf_descriptor(schema_id, indexes))

    def _decode_protobuf(self, data: bytes, schema_id: int) -> dict:
        framing = SchemaId("PROTOBUF")
        payload = dual_schema_id_deserializer(data, None, framing)
        message = self._protobuf_message(schema_id, framing.message_indexes or [0])()
        message.ParseFromString(payload.read())
        return json_format.MessageToDict(message, preserving_proto_field_name=True)

    # -- encoding ---------------------------------------------------------------------------------------------

    def encode(self, topic: str, value_json: str, *, subject: str, version: int | None = None,
               is_key: bool = False) -> tuple[bytes, SchemaInfo]:
        """JSON text encoded with a registered schema (never registering one): the bytes to produce."""
        info = self.schema(subject, version)
        try:
            value = json.loads(value_json)
        except ValueError as exc:
            raise RegistryError(f"The {'key' if is_key else 'value'} is not valid JSON: {exc}.",
                                cluster=self.cluster, code="bad_json") from exc
        ctx = SerializationContext(topic, _field(is_key))
        conf = {"auto.register.schemas": False, "use.schema.id": info.schema_id}
        kind = KINDS.get(info.schema_type, "")
        try:
            if kind == "avro":
                data = AvroSerializer(self.client, Schema(info.text, "AVRO"), conf=conf)(value, ctx)
            elif kind == "json-schema":
                data = _Re2JSONSerializer(Schema(info.text, "JSON"), self.client, conf=conf)(value, ctx)
            elif kind == "protobuf":
                data = self._encode_protobuf(info.schema_id, value)
            else:
                raise RegistryError(f"Schema type {info.schema_type} is not supported.", cluster=self.cluster)
        except (SerializationError, json_format.ParseError, ValueError, TypeError, KeyError,
                AttributeError, ValidationError) as exc:
            raise RegistryError(f"The {'key' if is_key else 'value'} does not fit {subject} version "
                                f"{info.version} ({info.schema_type}): {exc or type(exc).__name__}",
                                cluster=self.cluster, code="bad_record") from exc
        return data, info

    def _encode_protobuf(self, schema_id: int, value: object) -> bytes:
        """The schema's first message type, as the console's produce form offers it."""
        message = self._protobuf_message(schema_id, [0])()
        json_format.ParseDict(value, message)
        framing = SchemaId("PROTOBUF", schema_id, message_indexes=[0])
        return framing.id_to_bytes() + message.SerializeToString()


class _Re2JSONSerializer(JSONSerializer):
    """confluent-kafka's serializer with the console's validator: the schema's patterns run in RE2
    (gateway/kafka/json_schema_checks.py), not in Python's backtracking engine."""

    def _get_validator(self, schema, parsed_schema, registry):
        return re2_validator(parsed_schema, registry)


def check_reference_name(name: object) -> None:
    """Raises ValueError unless a Protobuf reference's name is a relative path of plain file-name segments (the
    import name protoc resolves): never absolute, never `..`, never a hidden file, never the main file's name."""
    text = name if isinstance(name, str) else ""
    segments = text.split("/")
    if (not text or len(text) > MAX_REFERENCE_NAME or text == MAIN_PROTO
            or not all(_REFERENCE_SEGMENT.fullmatch(segment) for segment in segments)):
        raise ValueError(MSG_BAD_REFERENCE.format(name=name))


def _reference_file(root: Path, name: str) -> Path:
    """Where protoc finds a reference: inside `root`, whatever the name (checked again after resolving)."""
    check_reference_name(name)
    target = (root / name).resolve()
    if not target.is_relative_to(root.resolve()):
        raise ValueError(MSG_BAD_REFERENCE.format(name=name))
    return target


def _serialized_descriptor(text: str | None) -> descriptor_pb2.FileDescriptorProto | None:
    if not text:
        return None
    try:
        proto = _str_to_proto("default", text)
    except (binascii.Error, DecodeError, SerializationError, UnicodeEncodeError, ValueError):
        return None
    return proto if proto.message_type or proto.enum_type else None


def _compile_proto(text: str, references: dict[str, str], pool: DescriptorPool) -> str:
    """Compiles .proto text (and its references, by import name) with protoc from grpcio-tools; adds every file
    to the pool and returns the main file's name."""
    from grpc_tools import protoc  # only registries that hand back .proto text need the compiler

    include = Path(protoc.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory(prefix="console-proto-") as folder:
        root = Path(folder)
        for name, ref_text in {**references, MAIN_PROTO: text}.items():
            target = root / MAIN_PROTO if name == MAIN_PROTO else _reference_file(root, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(ref_text)
        out = root / "descriptors.bin"
        args = ["protoc", f"-I{root}", f"-I{include}", "--include_imports", f"--descriptor_set_out={out}", MAIN_PROTO]
        failed = protoc.main(args)  # protoc's own messages go to the process's stderr (the server log)
        if failed:
            raise ValueError(f"the registry's Protobuf schema does not compile (protoc exit {failed})")
        found = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    for file in found.file:
        try:
            pool.FindFileByName(file.name)
        except KeyError:
            pool.Add(file)
    return MAIN_PROTO


_codecs: dict[tuple, RegistryCodec] = {}
_codecs_lock = threading.Lock()


def registry_codec(connection: ClusterConnection, *, timeout: float) -> RegistryCodec:
    """The process's codec for this registry and these settings."""
    key = (connection.name, connection.registry_url, tuple(sorted(connection.registry_config.items())), timeout)
    with _codecs_lock:
        codec = _codecs.get(key)
        if codec is None:
            codec = _codecs[key] = RegistryCodec(connection, timeout)
        return codec


def forget_codecs() -> None:
    with _codecs_lock:
        _codecs.clear()
