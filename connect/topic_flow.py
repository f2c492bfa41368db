"""Which topics a connector's configuration reads and writes, and which it makes Kafka create, as far as the
configuration tells. Pure: no Django, no Connect, no Kafka.

A sink connector reads `topics` (or every topic `topics.regex` matches) from its worker's cluster and writes only
its dead letter queue there. A source connector writes where its settings name a topic (`topic`, `kafka.topic`,
`….topic.name`, a `….prefix` of names), MirrorMaker 2's connectors where their replication policy puts the
remote topics, and anywhere a topic-routing transform sends a record: that last one is not known, and says so.
Topics are created by Connect for `topic.creation.*` settings, a dead letter queue or an offsets topic that does
not exist yet, and by MirrorMaker 2's connectors (remote, checkpoint, heartbeat and offset-sync topics)."""

from __future__ import annotations

import re
from dataclasses import dataclass

SINK, SOURCE = "sink", "source"
MIRROR_SOURCE = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
MIRROR_CHECKPOINT = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
MIRROR_HEARTBEAT = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
MIRROR_CLASSES = frozenset({MIRROR_SOURCE, MIRROR_CHECKPOINT, MIRROR_HEARTBEAT})
DEFAULT_POLICY = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
DLQ = "errors.deadletterqueue.topic.name"
OFFSETS_TOPIC = "offsets.storage.topic"
# Kafka's own transformations that never change a record's topic (RegexRouter and TimestampRouter do; any class
# not named here may).
_KEEPS_TOPIC = frozenset({"Cast", "DropHeaders", "ExtractField", "Filter", "Flatten", "HeaderFrom", "HoistField",
                          "InsertField", "InsertHeader", "MaskField", "ReplaceField", "SetSchemaMetadata",
                          "TimestampConverter", "ValueToKey"})
_KAFKA_TRANSFORM = re.compile(r"org\.apache\.kafka\.connect\.transforms\.(\w+)(\$(Key|Value|Header))?")
# Settings of a source connector that name a topic it writes, or the start of such names.
_TOPIC_KEY = re.compile(r"(^|\.)(topic|topics|kafka\.topic|topic\.name)$")
_PREFIX_KEY = re.compile(r"(^|\.)(topic\.prefix|prefix)$")


@dataclass(frozen=True)
class TopicFlow:
    reads: tuple[str, ...] = ()  # topics of the worker's cluster a sink reads
    reads_pattern: str = ""  # a sink's topics.regex
    reads_elsewhere: str = ""  # the bootstrap servers of another cluster it reads (MirrorMaker 2's source)
    writes: tuple[str, ...] = ()  # exact names
    write_prefixes: tuple[str, ...] = ()  # every name starting with one may be written
    write_patterns: tuple[str, ...] = ()  # names (regular expressions) written under the name they are read with
    unknown_writes: str = ""  # why the names written cannot be told; "" when they can
    writes_elsewhere: str = ""  # producer.override.bootstrap.servers: the cluster written is not the worker's
    creates: tuple[str, ...] = ()  # why it makes Kafka create topics, besides writing names that do not exist


def _names(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _transform_types(config: dict[str, str]) -> dict[str, str]:
    return {alias: config.get(f"transforms.{alias}.type", "") for alias in _names(config.get("transforms", ""))}


def _renaming_transforms(config: dict[str, str]) -> list[str]:
    renaming = []
    for alias, kind in _transform_types(config).items():
        known = _KAFKA_TRANSFORM.fullmatch(kind.strip())
        if not known or known.group(1) not in _KEEPS_TOPIC:
            renaming.append(alias)
    return renaming


def _mirror(plugin: str, config: dict[str, str]) -> dict:
    """Where MirrorMaker 2's connectors write on their target (the worker's cluster unless overridden)."""
    source_alias = config.get("source.cluster.alias", "")
    separator = config.get("replication.policy.separator", ".")
    policy = config.get("replication.policy.class", DEFAULT_POLICY).strip()
    flow: dict = {"creates": (f"{plugin.rsplit('.', 1)[-1]} creates the topics it writes on its target",)}
    if plugin == MIRROR_HEARTBEAT:
        flow["writes"] = ("heartbeats",)
        return flow
    if plugin == MIRROR_CHECKPOINT:
        flow["writes"] = (f"{source_alias}.checkpoints.internal",)
        flow["write_prefixes"] = ("mm2-offset-syncs",)
        return flow
    flow["reads_elsewhere"] = config.get("source.cluster.bootstrap.servers", "") or "(not set)"
    flow["write_prefixes"] = ("mm2-offset-syncs",)
    if policy == DEFAULT_POLICY:
        flow["write_prefixes"] += (f"{source_alias}{separator}",)
    elif policy == IDENTITY_POLICY:
        flow["write_patterns"] = tuple(_names(config.get("topics", ".*")) or [".*"])
    else:
        flow["unknown_writes"] = f"the replication policy {policy} names the remote topics"
    return flow


def topic_flow(plugin: str, plugin_type: str, config: dict[str, str]) -> TopicFlow:
    """What the configuration says the connector reads, writes and creates."""
    creates = [key for key in sorted(config) if key.startswith("topic.creation.") and key != "topic.creation.enable"]
    fields: dict = {"writes_elsewhere": config.get("producer.override.bootstrap.servers", "").strip()}
    writes: list[str] = []
    if plugin in MIRROR_CLASSES:
        fields.update(_mirror(plugin, config))
        writes = list(fields.pop("writes", ()))
    elif plugin_type == SINK:
        fields["reads"] = tuple(_names(config.get("topics", "")))
        fields["reads_pattern"] = config.get("topics.regex", "").strip()
    else:
        # A source (or a plugin Connect does not know): every setting naming a topic may be one it writes.
        writes = [name for key, value in config.items() if _TOPIC_KEY.search(key) for name in _names(value)]
        fields["write_prefixes"] = tuple(value.strip() for key, value in config.items()
                                         if _PREFIX_KEY.search(key) and "topic" in key and value.strip())
        renaming = _renaming_transforms(config)
        if renaming:
            fields["unknown_writes"] = f"transformation {', '.join(renaming)} may route records to any topic"
        if config.get(OFFSETS_TOPIC, "").strip():
            writes.append(config[OFFSETS_TOPIC].strip())
    if config.get(DLQ, "").strip():
        writes.append(config[DLQ].strip())
    fields["creates"] = tuple(fields.get("creates", ())) + tuple(f"{key} asks Connect to create topics"
                                                                 for key in creates)
    return TopicFlow(writes=tuple(dict.fromkeys(writes)), **fields)


def may_write(flow: TopicFlow, topic: str, *, pattern_matches) -> bool:
    """Whether the connector may write `topic`. `pattern_matches(pattern, topic)` runs a pattern from the
    configuration (and answers True when it cannot run it: the caller fails closed)."""
    return bool(flow.unknown_writes or topic in flow.writes
                or any(topic.startswith(prefix) for prefix in flow.write_prefixes)
                or any(pattern_matches(pattern, topic) for pattern in flow.write_patterns))
