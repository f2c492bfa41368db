"""Reads for the message pages: matches as rows, registry subjects and schemas, groups that could be reset to a
record."""

from __future__ import annotations

import json
from dataclasses import dataclass

from console.clusters.selectors import cluster_admin, cluster_get
from console.errors import ConsoleError
from gateway.kafka.errors import RegistryError
from gateway.kafka.types import PartitionRef, RecordInfo, ScanMatch, SchemaInfo, SubjectInfo
from topics.decoding import Decoded, present


@dataclass(frozen=True)
class MatchRow:
    topic: str
    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: Decoded
    value: Decoded
    headers: list[tuple[str, Decoded]]

    def as_json(self) -> dict:
        """One record as `messages read/search --format json` prints it."""
        row = {"partition": self.partition, "offset": self.offset, "timestamp": self.timestamp,
               "key": self.key.value, "value": self.value.value,
               "headers": [[name, value.value] for name, value in self.headers]}
        schemas = {side: _schema_json(part) for side, part in (("key", self.key), ("value", self.value))
                   if part.schema is not None}
        if schemas:
            row["schema"] = schemas
        errors = {side: part.error for side, part in (("key", self.key), ("value", self.value)) if part.error}
        if errors:
            row["undecoded"] = errors
        return row


def _schema_json(part: Decoded) -> dict:
    schema = part.schema
    return {"subject": schema.subject, "version": schema.version, "id": schema.schema_id, "type": schema.schema_type}


def record_row(record: RecordInfo, key=None, value=None, *, max_chars: int | None = 10_000) -> MatchRow:
    """A record as people read it; `max_chars` cuts long parts for a page (None: whole, for a file)."""
    return MatchRow(topic=record.topic, partition=record.partition, offset=record.offset, timestamp=record.timestamp,
                    timestamp_type=record.timestamp_type,
                    key=present(record.key, key if key is not None else record.key_decoded, max_chars=max_chars),
                    value=present(record.value, value if value is not None else record.value_decoded,
                                  max_chars=max_chars),
                    headers=[(name, present(data, None, max_chars=max_chars)) for name, data in record.headers])


def decoded_matches(matches: list[ScanMatch], *, cluster: str) -> list[ScanMatch]:
    """Matches with the parts the scan did not decode (no filter needed them) decoded through the cluster's
    registry, once per schema id thanks to the registry client's cache."""
    admin = cluster_admin(cluster) if cluster else None
    if admin is None or not admin.connection.registry_url:
        return list(matches)
    found = []
    for match in matches:
        record, key, value = match.record, match.key, match.value
        if key is None:
            key = admin.registry_decode(record.topic, record.key, is_key=True)
        if value is None:
            value = admin.registry_decode(record.topic, record.value)
        found.append(ScanMatch(record, key, value))
    return found


def match_rows(matches: list[ScanMatch], *, decode: bool = True, cluster: str = "") -> list[MatchRow]:
    """Rows for matches, decoded through the registry unless `decode` is off."""
    if decode:
        matches = decoded_matches(matches, cluster=cluster)
    return [record_row(m.record, m.key, m.value) for m in matches]


MSG_NO_RECORD = "There is no record at offset {offset} of {topic} partition {partition} (read as read_uncommitted)."


def record_at(cluster: str, topic: str, partition: int, offset: int) -> RecordInfo:
    admin = cluster_admin(cluster)
    found = admin.read_records(topic, partition, start=offset, limit=1, end=offset + 1, timeout=admin.timeout + 2)
    if not found or found[0].offset != offset:
        raise ConsoleError(MSG_NO_RECORD.format(offset=offset, topic=topic, partition=partition))
    return found[0]


def registry_of(cluster: str) -> str:
    return cluster_get(cluster).schema_registry_url


def subjects(cluster: str) -> list[SubjectInfo]:
    if not registry_of(cluster):
        raise ConsoleError(f"Cluster '{cluster}' has no schema registry; register one with its settings.")
    return cluster_admin(cluster).registry_subjects()


@dataclass(frozen=True)
class SchemaView:
    info: SchemaInfo
    pretty: str
    versions: list[int]


def schema_pretty(info: SchemaInfo) -> str:
    """The schema as people read it: indented JSON for Avro and JSON Schema, the .proto text as it is."""
    try:
        return json.dumps(json.loads(info.text), indent=2)
    except ValueError:
        return info.text


def schema_view(cluster: str, *, schema_id: int | None = None, subject: str = "",
                version: int | None = None) -> SchemaView:
    admin = cluster_admin(cluster)
    info = admin.registry_schema_by_id(schema_id) if schema_id is not None else admin.registry_schema(subject, version)
    try:
        versions = admin.registry_versions(info.subject) if info.subject else []
    except RegistryError:
        versions = []
    return SchemaView(info=info, pretty=schema_pretty(info), versions=versions)


def groups_committed_on(cluster: str, topic: str, partition: int) -> list[tuple[str, int | None]]:
    """Consumer groups with a commit on the topic, and their committed offset on this partition (None when they
    commit other partitions only): the groups a person may want to reset to a record. One offsets request for
    all groups."""
    admin = cluster_admin(cluster)
    listings = admin.list_groups()
    committed = admin.group_offsets([g.group_id for g in listings], skip_failed=True) if listings else {}
    ref = PartitionRef(topic, partition)
    found = [(group, offsets.get(ref)) for group, offsets in committed.items()
             if any(r.topic == topic for r in offsets)]
    return sorted(found, key=lambda pair: pair[0])
