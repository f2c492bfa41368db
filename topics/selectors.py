"""Reads for topics and brokers. Everything about many topics is fetched in batches and cached briefly. The topic
list (topics/listing.py) and record pages (topics/records_page.py) are read here too."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.core.cache import cache

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import InvalidRequest, KafkaGatewayError
from gateway.kafka.types import BROKER, EARLIEST, LATEST, STABLE, TOPIC, PartitionRef
from console.timing import in_request
from topics.configdocs import EXPLANATIONS, broker_default, human_value
from topics.diffing import ConfigChange, check_config_request, config_diff

from topics.listing import (  # noqa: F401 - the topic list is read through this module too
    MSG_TABLE_BEING_BUILT, SORT_KEYS, filter_topics, leader_windows, topic_snapshot_note,
    topic_names, topic_snapshot_note_partitions, topic_snapshot_refresh, topic_table, topic_table_snapshot,
    with_configs,
)
from topics.records_page import (  # noqa: F401 - and record pages
    MSG_NO_PARTITION, OffsetGap, RecordRow, RecordsPage, offset_gaps, records_page,
)

log = logging.getLogger(__name__)

MSG_BROKER_REFUSES = "The broker refuses this change: {reason}"


@dataclass(frozen=True)
class PartitionRow:
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    start: int
    end: int
    stable: int | None = None  # the last stable offset: where read_committed readers must stop
    blocking: object | None = None  # transactions.selectors.BlockingTransaction when stable < end
    sizes: dict[int, int] | None = None  # broker -> bytes on disk of its replica; None until known

    @property
    def leader_size(self) -> int | None:
        if not self.sizes:
            return None
        return self.sizes.get(self.leader) if self.leader in self.sizes else max(self.sizes.values())

    @property
    def messages(self) -> int:
        return max(0, self.end - self.start)

    @property
    def held_back(self) -> int:
        return 0 if self.stable is None else max(0, self.end - self.stable)

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)


@dataclass(frozen=True)
class ConfigRow:
    name: str
    value: str | None
    source: str
    inherited: str | None
    read_only: bool
    sensitive: bool
    explanation: str = ""

    @property
    def is_override(self) -> bool:
        return self.source in ("topic", "dynamic-broker", "dynamic-default-broker")

    @property
    def human(self) -> str:
        return human_value(self.name, self.value)

    @property
    def inherited_human(self) -> str:
        return human_value(self.name, self.inherited)


@dataclass(frozen=True)
class TopicDetail:
    name: str
    topic_id: str | None
    internal: bool
    partitions: list[PartitionRow]
    configs: list[ConfigRow] = field(default_factory=list)
    blocking_error: str | None = None  # why open transactions could not be described

    @property
    def messages(self) -> int:
        return sum(p.messages for p in self.partitions)

    @property
    def replication_factor(self) -> int:
        return max((len(p.replicas) for p in self.partitions), default=0)

    @property
    def under_replicated_count(self) -> int:
        return sum(1 for p in self.partitions if p.under_replicated or p.leader is None)


def topic_detail(cluster: str, name: str) -> TopicDetail:
    from transactions.selectors import StableOffsets, blocking_transactions

    admin = cluster_admin(cluster)
    # The configs (and, every 30 s, the broker's values behind them) are asked beside the describe and offsets:
    # a topic page is then two round trips long, not four to six.
    with ThreadPoolExecutor(max_workers=1) as pool:
        configuring = pool.submit(in_request(_config_rows), admin, name)
        topic = admin.describe_topics([name])[name]
        refs = [PartitionRef(name, p.partition) for p in topic.partitions]
        offsets = admin.list_offsets_many(refs, [EARLIEST, LATEST, STABLE])
        configs = configuring.result()
    stable = [StableOffsets(r, offsets[STABLE][r].offset, offsets[LATEST][r].offset) for r in refs]
    blocking_error = None
    try:
        blocking = blocking_transactions(cluster, stable)
    except KafkaGatewayError as exc:  # the page still shows the offsets; only the transaction's details are missing
        blocking, blocking_error = {}, exc.message
    from topics.disk import disk_usage

    usage = disk_usage(cluster, topic=name)
    sizes = usage.partition_sizes(name) if usage is not None else {}
    partitions = [
        PartitionRow(partition=p.partition, leader=p.leader, replicas=p.replicas, isr=p.isr,
                     sizes=sizes.get(p.partition) if usage is not None else None,
                     start=offsets[EARLIEST][PartitionRef(name, p.partition)].offset,
                     end=offsets[LATEST][PartitionRef(name, p.partition)].offset,
                     stable=offsets[STABLE][PartitionRef(name, p.partition)].offset,
                     blocking=blocking.get(PartitionRef(name, p.partition)))
        for p in topic.partitions
    ]
    return TopicDetail(name=name, topic_id=topic.topic_id, internal=topic.is_internal, partitions=partitions,
                       configs=configs, blocking_error=blocking_error)


def _broker_values(cluster: str, admin=None) -> dict[str, str | None]:
    """One broker's effective configuration, where topic defaults come from; cached briefly (it rarely changes)."""
    key = f"topics:broker-values:{cluster}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    admin = admin or cluster_admin(cluster)
    description = admin.describe_cluster()
    broker_id = str(description.controller_id if description.controller_id is not None else description.brokers[0].id)
    values = {k: e.value for k, e in admin.describe_configs(BROKER, [broker_id])[broker_id].items()}
    cache.set(key, values, 30)
    return values


def broker_values_invalidate(cluster: str) -> None:
    cache.delete(f"topics:broker-values:{cluster}")


def topic_config_rows(cluster: str, name: str) -> list[ConfigRow]:
    """Each config with its source and the value it would have without a topic override (the broker's)."""
    return _config_rows(cluster_admin(cluster), name)


def _config_rows(admin, name: str) -> list[ConfigRow]:
    entries = admin.describe_configs(TOPIC, [name])[name]
    broker_values = _broker_values(admin.cluster, admin)
    rows = []
    for key, entry in sorted(entries.items()):
        inherited = broker_default(key, broker_values)
        rows.append(ConfigRow(
            name=key, value=entry.value, source=entry.source,
            inherited=inherited if inherited is not None else entry.inherited_value,
            read_only=entry.read_only, sensitive=entry.sensitive, explanation=EXPLANATIONS.get(key, ""),
        ))
    # The common ones first, in the order an admin looks for them.
    order = {key: i for i, key in enumerate(EXPLANATIONS)}
    return sorted(rows, key=lambda r: (order.get(r.name, len(order)), r.name))


def topic_inherited_values(cluster: str, keys: list[str]) -> dict[str, str | None]:
    broker_values = _broker_values(cluster)
    return {key: broker_default(key, broker_values) for key in keys}


@dataclass(frozen=True)
class BrokerConfigRow:
    name: str
    value: str | None
    source: str
    read_only: bool
    sensitive: bool

    @property
    def human(self) -> str:
        return human_value(self.name, self.value)


def broker_config_rows(cluster: str, broker_id: int) -> list[BrokerConfigRow]:
    entries = cluster_admin(cluster).describe_configs(BROKER, [str(broker_id)])[str(broker_id)]
    return [BrokerConfigRow(name=k, value=e.value, source=e.source, read_only=e.read_only, sensitive=e.sensitive)
            for k, e in sorted(entries.items())]


def config_change_preview(cluster: str, kind: str, name: str, *, set_values: dict[str, str],
                          delete: list[str]) -> list[ConfigChange]:
    """What a config change would do, for a topic or a broker; changes nothing. The broker checks the change first
    (IncrementalAlterConfigs with validate_only), so a value it would refuse (`retention.ms=later`) is refused
    here with its own words, at the field, rather than at apply."""
    check_config_request(set_values, delete)
    admin = cluster_admin(cluster)
    entries = admin.describe_configs(kind, [name])[name]
    inherited = topic_inherited_values(cluster, delete) if kind == TOPIC and delete else None
    changes = config_diff(entries, set_values=set_values, delete=delete, inherited=inherited)
    try:
        admin.alter_configs(kind, name, set_values=set_values, delete=delete, validate_only=True)
    except InvalidRequest as exc:
        raise ConsoleError(MSG_BROKER_REFUSES.format(reason=exc.message), field="set_values") from exc
    return changes
