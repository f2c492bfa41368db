"""Transactions and the producer states partitions keep."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.kafka.types.topics import PartitionRef


@dataclass(frozen=True)
class TransactionListing:
    transactional_id: str
    coordinator: int
    producer_id: int
    state: str  # Kafka's names: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, ...


@dataclass(frozen=True)
class TransactionInfo:
    transactional_id: str
    coordinator: int
    producer_id: int
    producer_epoch: int
    state: str
    timeout_ms: int
    start_time_ms: int | None  # when the open transaction began; None when none is open
    partitions: tuple[PartitionRef, ...]


@dataclass(frozen=True)
class ProducerState:
    """One active producer of a partition, as the partition leader keeps it."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int  # -1 when the leader knows none
    last_sequence: int
    last_timestamp: int
    transaction_start_offset: int | None  # first offset of its open transaction on this partition, if any
