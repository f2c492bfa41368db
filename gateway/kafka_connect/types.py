"""What the Connect gateway returns: frozen values, each with the REST API's own JSON beside the typed fields
(`rest`), so the shell can print exactly what Connect answered while the code reads typed fields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gateway.kafka.types import PartitionRef

SOURCE, SINK = "source", "sink"
RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED, RESTARTING = (
    "RUNNING", "PAUSED", "STOPPED", "FAILED", "UNASSIGNED", "RESTARTING")
STATES = (RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED, RESTARTING)
# KIP-875's keys of a sink connector's partitions and offsets.
SINK_TOPIC, SINK_PARTITION, SINK_OFFSET = "kafka_topic", "kafka_partition", "kafka_offset"


@dataclass(frozen=True)
class WorkerInfo:
    version: str
    commit: str
    kafka_cluster_id: str


@dataclass(frozen=True)
class PluginInfo:
    class_name: str
    type: str  # source, sink, converter, transformation, predicate, ...
    version: str

    @property
    def short_name(self) -> str:
        return self.class_name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class ConfigDefinition:
    """One setting a plugin declares (GET /connector-plugins/{plugin}/config, KIP-769)."""

    name: str
    type: str  # STRING, INT, LONG, DOUBLE, BOOLEAN, LIST, CLASS, PASSWORD
    required: bool
    default_value: str | None
    importance: str
    documentation: str
    group: str | None
    display_name: str
    order: int = -1  # its place in its group (order_in_group); -1 when the plugin gives none

    @property
    def secret(self) -> bool:
        return self.type == "PASSWORD"


@dataclass(frozen=True)
class FieldCheck:
    """One setting as PUT /connector-plugins/{plugin}/config/validate judged it."""

    definition: ConfigDefinition
    value: str | None
    errors: tuple[str, ...]
    recommended: tuple[str, ...]
    visible: bool


@dataclass(frozen=True)
class ConfigValidation:
    plugin: str
    error_count: int
    fields: tuple[FieldCheck, ...]
    groups: tuple[str, ...] = ()  # the setting groups in Connect's order (Common, Transforms, ...)

    @property
    def errors(self) -> dict[str, tuple[str, ...]]:
        """Setting name -> Connect's messages, for the settings that have any."""
        return {f.definition.name: f.errors for f in self.fields if f.errors}

    @property
    def secret_keys(self) -> frozenset[str]:
        return frozenset(f.definition.name for f in self.fields if f.definition.secret)


@dataclass(frozen=True)
class TaskState:
    id: int
    state: str
    worker_id: str
    trace: str = ""


@dataclass(frozen=True)
class ConnectorState:
    """GET /connectors/{name}/status."""

    name: str
    type: str
    state: str
    worker_id: str
    trace: str
    tasks: tuple[TaskState, ...]
    rest: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def tasks_running(self) -> int:
        return sum(1 for t in self.tasks if t.state == RUNNING)

    @property
    def tasks_failed(self) -> int:
        return sum(1 for t in self.tasks if t.state == FAILED)


@dataclass(frozen=True)
class ConnectorInfo:
    """GET /connectors/{name}: its configuration as stored (config provider references unresolved)."""

    name: str
    type: str
    config: dict[str, str]
    tasks: tuple[int, ...]
    rest: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def plugin(self) -> str:
        return self.config.get("connector.class", "")


@dataclass(frozen=True)
class ConnectorOverview:
    """One entry of GET /connectors?expand=info&expand=status."""

    info: ConnectorInfo
    status: ConnectorState
    rest: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.info.name


@dataclass(frozen=True)
class OffsetEntry:
    """One partition of a connector's offsets (KIP-875): the connector's own maps for a source connector,
    {kafka_topic, kafka_partition} -> {kafka_offset} for a sink connector. `offset` None deletes it."""

    partition: dict[str, Any]
    offset: dict[str, Any] | None

    def as_rest(self) -> dict:
        return {"partition": self.partition, "offset": self.offset}

    @property
    def key(self) -> str:
        """A stable text of the partition map, to match entries before and after a change."""
        import json

        return json.dumps(self.partition, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class ConnectorOffsets:
    """GET /connectors/{name}/offsets."""

    entries: tuple[OffsetEntry, ...]
    rest: dict = field(default_factory=dict, compare=False, repr=False)

    def sink_offsets(self) -> dict[PartitionRef, int]:
        """A sink connector's offsets by topic partition (entries of any other shape are left out)."""
        found = {}
        for entry in self.entries:
            topic, partition = entry.partition.get(SINK_TOPIC), entry.partition.get(SINK_PARTITION)
            offset = (entry.offset or {}).get(SINK_OFFSET)
            if isinstance(topic, str) and isinstance(partition, int) and isinstance(offset, int):
                found[PartitionRef(topic, partition)] = offset
        return found
