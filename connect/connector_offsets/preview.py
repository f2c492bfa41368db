"""The preview of a change to a connector's offsets (KIP-875): every partition it writes, with the offset before
and after, whether the connector is STOPPED (Connect refuses otherwise), and the fingerprint of all its offsets
that the change checks again. A sink connector's targets come from the group-reset strategies, resolved against
the real log through the Kafka gateway; a source connector's are the maps a person wrote."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from connect.registration import connect_client, connect_cluster_get
from console.clusters.selectors import cluster_admin
from gateway.kafka_connect.types import SINK, SINK_OFFSET, SINK_PARTITION, SINK_TOPIC, STOPPED, ConnectorOffsets, OffsetEntry
from console.errors import ConsoleError
from gateway.kafka.types import PartitionRef
from offsets.resets.planning import AllTopics, ResetPlan, Strategy, TopicScope, describe_strategy
from offsets.resets.preview import plan_from_state

MSG_OTHER_CLUSTER = ("Connector {name} consumes from another Kafka cluster (consumer.override.bootstrap.servers), "
                     "whose log the console cannot read: edit its offsets as JSON instead.")
MSG_SINK_ONLY = "Offset strategies (earliest, latest, to offset, shift, to datetime) are for sink connectors."


def offsets_fingerprint(offsets: ConnectorOffsets) -> str:
    payload = sorted(json.dumps(e.as_rest(), sort_keys=True) for e in offsets.entries)
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class OffsetRow:
    partition: dict
    before: dict | None  # None: the connector has no offset there
    after: dict | None  # None: deleted

    @property
    def changes(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True)
class OffsetsPreview:
    connect: str
    connector: str
    type: str
    state: str
    rows: tuple[OffsetRow, ...]
    fingerprint: str
    plan: ResetPlan | None = None  # a sink connector's plan, with log start and end per partition
    strategy: str = ""

    @property
    def allowed(self) -> bool:
        return self.state == STOPPED

    @property
    def writes(self) -> list[OffsetEntry]:
        return [OffsetEntry(row.partition, row.after) for row in self.rows if row.changes]


def sink_entry(ref: PartitionRef, offset: int | None) -> OffsetEntry:
    return OffsetEntry({SINK_TOPIC: ref.topic, SINK_PARTITION: ref.partition},
                       None if offset is None else {SINK_OFFSET: offset})


def _current(cluster: str, connect: str, name: str):
    client = connect_client(connect_cluster_get(cluster, connect))
    info, status, offsets = client.connector(name), client.status(name), client.offsets(name)
    return info, status, offsets


def rows_for(offsets: ConnectorOffsets, writes: Sequence[OffsetEntry]) -> tuple[OffsetRow, ...]:
    before = {entry.key: entry.offset for entry in offsets.entries}
    return tuple(OffsetRow(entry.partition, before.get(entry.key), entry.offset) for entry in writes)


def sink_offsets_preview(cluster: str, connect: str, name: str, scope: AllTopics | Sequence[TopicScope],
                         strategy: Strategy, *, now_ms: int | None = None) -> OffsetsPreview:
    """kafka-consumer-groups --reset-offsets --dry-run semantics over the sink connector's own offsets (its
    consumer group's), the log read now through the Kafka gateway."""
    info, status, offsets = _current(cluster, connect, name)
    if info.type != SINK:
        raise ConsoleError(MSG_SINK_ONLY)
    if info.config.get("consumer.override.bootstrap.servers"):
        raise ConsoleError(MSG_OTHER_CLUSTER.format(name=name))
    committed = offsets.sink_offsets()
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    plan = plan_from_state(cluster_admin(cluster), f"connect-{name}", scope, strategy, committed=committed,
                           now_ms=now_ms)
    writes = [sink_entry(ref, target) for ref, target in plan.targets.items()]
    return OffsetsPreview(connect=connect, connector=name, type=info.type, state=status.state,
                          rows=rows_for(offsets, writes), fingerprint=offsets_fingerprint(offsets), plan=plan,
                          strategy=describe_strategy(strategy))


def written_offsets_preview(cluster: str, connect: str, name: str, writes: Sequence[OffsetEntry], *,
                            strategy: str = "as written") -> OffsetsPreview:
    """Offsets given whole (a source connector's maps, a sink connector's JSON, an audited "before")."""
    info, status, offsets = _current(cluster, connect, name)
    return OffsetsPreview(connect=connect, connector=name, type=info.type, state=status.state,
                          rows=rows_for(offsets, writes), fingerprint=offsets_fingerprint(offsets), strategy=strategy)


def reset_offsets_preview(cluster: str, connect: str, name: str) -> OffsetsPreview:
    """DELETE /connectors/{name}/offsets forgets every partition's offset."""
    info, status, offsets = _current(cluster, connect, name)
    rows = tuple(OffsetRow(entry.partition, entry.offset, None) for entry in offsets.entries)
    return OffsetsPreview(connect=connect, connector=name, type=info.type, state=status.state, rows=rows,
                          fingerprint=offsets_fingerprint(offsets), strategy="reset")
