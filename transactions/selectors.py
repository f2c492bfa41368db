"""Transactions and producer states as Kafka's `kafka-transactions` tool computes them: list, describe,
describe-producers and find-hanging, each with the same inputs and the same answer."""

from __future__ import annotations

import time
from dataclasses import dataclass

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError, NotFound
from gateway.kafka.types import LATEST, STABLE, PartitionRef, ProducerState, TransactionInfo, TransactionListing

MSG_UNKNOWN_ID = "Transactional id '{id}' is not known to any transaction coordinator of cluster '{cluster}'."
MSG_SCOPE = "Finding hanging transactions needs a topic or a broker id to limit the search, as Kafka's tool does."
MSG_PARTITION_NEEDS_TOPIC = "A partition needs its topic."
DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN = 15  # Kafka's tool's default, and the broker's transaction.max.timeout.ms


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class TransactionRow:
    listing: TransactionListing
    info: TransactionInfo | None  # None when the coordinator forgot it between the list and the describe

    @property
    def open_for_ms(self) -> int | None:
        if self.info is None or self.info.start_time_ms is None:
            return None
        return max(0, now_ms() - self.info.start_time_ms)


def transactions_list(cluster: str) -> list[TransactionListing]:
    return cluster_admin(cluster).list_transactions()


def transactions_overview(cluster: str) -> list[TransactionRow]:
    """Every transactional id with its description: one list and one batched describe."""
    admin = cluster_admin(cluster)
    listings = admin.list_transactions()
    described = admin.describe_transactions([t.transactional_id for t in listings])
    return [TransactionRow(t, described.get(t.transactional_id)) for t in listings]


def transaction_describe(cluster: str, transactional_id: str) -> TransactionInfo:
    found = cluster_admin(cluster).describe_transactions([transactional_id]).get(transactional_id)
    if found is None:
        raise NotFound(MSG_UNKNOWN_ID.format(id=transactional_id, cluster=cluster))
    return found


def _partitions(cluster: str, topic: str, partition: int | None) -> list[PartitionRef]:
    if partition is not None:
        return [PartitionRef(topic, partition)]
    described = cluster_admin(cluster).describe_topics([topic])[topic]
    return [PartitionRef(topic, p.partition) for p in described.partitions]


def producers_describe(cluster: str, topic: str, partition: int | None = None, *,
                       broker: int | None = None) -> dict[PartitionRef, tuple[ProducerState, ...]]:
    return cluster_admin(cluster).describe_producers(_partitions(cluster, topic, partition), broker=broker)


@dataclass(frozen=True)
class OpenTransaction:
    ref: PartitionRef
    producer: ProducerState

    def duration_ms(self, at_ms: int) -> int:
        """Kafka's tool measures from the producer's last write, not from the transaction's first."""
        return at_ms - self.producer.last_timestamp


def open_transactions(producers: dict[PartitionRef, tuple[ProducerState, ...]], *, max_timeout_ms: int,
                      at_ms: int) -> list[OpenTransaction]:
    """Candidates: producers with an open transaction whose last write is older than the longest timeout a
    transaction may have, so its coordinator should have ended it by now."""
    return [OpenTransaction(ref, p) for ref, states in sorted(producers.items()) for p in states
            if p.transaction_start_offset is not None and at_ms - p.last_timestamp > max_timeout_ms]


def hanging_among(candidates: list[OpenTransaction], ids_by_producer: dict[int, str],
                  descriptions: dict[str, TransactionInfo | None]) -> list[OpenTransaction]:
    """A candidate hangs when no coordinator will write its marker: its producer id maps to no transactional id,
    the id is not described, or the id's transaction does not include the partition."""
    hanging = []
    for candidate in candidates:
        transactional_id = ids_by_producer.get(candidate.producer.producer_id)
        description = descriptions.get(transactional_id) if transactional_id is not None else None
        if description is None or candidate.ref not in description.partitions:
            hanging.append(candidate)
    return hanging


def find_hanging(cluster: str, *, topic: str | None = None, partition: int | None = None, broker: int | None = None,
                 max_timeout_minutes: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN,
                 at_ms: int | None = None) -> list[OpenTransaction]:
    if topic is None and broker is None:
        raise ConsoleError(MSG_SCOPE)
    if partition is not None and topic is None:
        raise ConsoleError(MSG_PARTITION_NEEDS_TOPIC)
    admin = cluster_admin(cluster)
    if topic is not None and partition is not None:  # the tool asks that partition whatever the broker
        refs = [PartitionRef(topic, partition)]
    else:  # like the tool: a topic's partitions, or every non-internal topic's, kept where the broker has a replica
        topics = admin.describe_topics([topic]).values() if topic is not None else [
            t for t in admin.list_topics() if not t.is_internal]
        refs = [PartitionRef(t.name, p.partition) for t in topics for p in t.partitions
                if broker is None or broker in p.replicas]
    at_ms = now_ms() if at_ms is None else at_ms
    producers = admin.describe_producers(refs, broker=broker) if refs else {}
    candidates = open_transactions(producers, max_timeout_ms=max_timeout_minutes * 60_000, at_ms=at_ms)
    if not candidates:
        return []
    ids_by_producer, descriptions = _owners(admin, {c.producer.producer_id for c in candidates})
    return hanging_among(candidates, ids_by_producer, descriptions)


def _owners(admin, producer_ids: set[int]) -> tuple[dict[int, str], dict[str, TransactionInfo | None]]:
    """The transactional id of each producer id a coordinator knows, and those ids' descriptions: one filtered
    ListTransactions and one batched DescribeTransactions."""
    listings = admin.list_transactions(producer_ids=sorted(producer_ids))
    ids_by_producer = {t.producer_id: t.transactional_id for t in listings}
    return ids_by_producer, admin.describe_transactions(sorted(set(ids_by_producer.values())))


@dataclass(frozen=True)
class StableOffsets:
    """Where read_committed readers of a partition must stop (the last stable offset) and the log end."""

    ref: PartitionRef
    last_stable: int
    log_end: int

    @property
    def held_back(self) -> int:
        return self.log_end - self.last_stable


def stable_offsets(cluster: str, refs: list[PartitionRef]) -> dict[PartitionRef, StableOffsets]:
    found = cluster_admin(cluster).list_offsets_many(refs, [STABLE, LATEST])
    return {r: StableOffsets(r, found[STABLE][r].offset, found[LATEST][r].offset) for r in refs}


@dataclass(frozen=True)
class BlockingTransaction:
    """The open transaction a partition's last stable offset waits on."""

    ref: PartitionRef
    producer_id: int
    start_offset: int
    last_write_ms: int
    transactional_id: str | None  # None: no coordinator tracks this producer (the transaction may hang)
    started_ms: int | None

    @property
    def since(self):
        from datetime import UTC, datetime

        return datetime.fromtimestamp((self.started_ms or self.last_write_ms) / 1000, tz=UTC)


def blocking_transactions(cluster: str, stable: list[StableOffsets]) -> dict[PartitionRef, BlockingTransaction]:
    """For partitions whose last stable offset is behind the log end: the producer whose open transaction starts
    there, and its transactional id and start when a coordinator knows them. Asked only for such partitions."""
    held = {s.ref: s for s in stable if s.held_back > 0}
    if not held:
        return {}
    admin = cluster_admin(cluster)
    blockers = {}
    for ref, producers in admin.describe_producers(sorted(held)).items():
        opened = [p for p in producers if p.transaction_start_offset is not None]
        if opened:
            blockers[ref] = min(opened, key=lambda p: p.transaction_start_offset)
    if not blockers:
        return {}
    ids, described = _owners(admin, {p.producer_id for p in blockers.values()})
    found = {}
    for ref, producer in blockers.items():
        transactional_id = ids.get(producer.producer_id)
        info = described.get(transactional_id) if transactional_id else None
        found[ref] = BlockingTransaction(
            ref=ref, producer_id=producer.producer_id, start_offset=producer.transaction_start_offset,
            last_write_ms=producer.last_timestamp, transactional_id=transactional_id if info else None,
            started_ms=info.start_time_ms if info else None)
    return found
