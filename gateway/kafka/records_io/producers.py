"""Idempotent producers kept between calls of one import (a session), in the client process that writes: a
bounded number, each closed when its import ends or after it has been idle a while."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from confluent_kafka import Producer

from gateway.kafka.librdkafka.client import client_config
from gateway.kafka.types import ClusterConnection

KEEP = 4
IDLE_S = 120.0


LIBRDKAFKA_BATCH = 1_000_000  # librdkafka's own batch.size and message.max.bytes
LIBRDKAFKA_MAX = 1_000_000_000


def _size_limits(max_batch_bytes: int | None) -> dict:
    """Batches no bigger than the topic takes, and single records up to that size (librdkafka's own limit of
    1,000,000 bytes is below a broker's default 1,048,588)."""
    if not max_batch_bytes or max_batch_bytes < 1:
        return {}
    limit = min(max_batch_bytes, LIBRDKAFKA_MAX)
    return {"batch.size": min(LIBRDKAFKA_BATCH, limit), "message.max.bytes": max(LIBRDKAFKA_BATCH, limit)}


class BatchProducers:
    def __init__(self) -> None:
        self._open: OrderedDict[str, tuple[Producer, float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, connection: ClusterConnection, session: str, *, timeout: float,
            max_batch_bytes: int | None = None) -> Producer:
        with self._lock:
            now = time.monotonic()
            for key in [k for k, (_, used) in self._open.items() if now - used > IDLE_S]:
                self._open.pop(key)[0].flush(timeout)
            found = self._open.pop(session, None) if session else None
            if found is None:
                while len(self._open) >= KEEP:
                    self._open.popitem(last=False)[1][0].flush(timeout)
                found = (Producer(client_config(connection, **{
                    "acks": "all", "enable.idempotence": True, "partitioner": "murmur2_random", "linger.ms": 5,
                    "message.timeout.ms": int(timeout * 1000), "queue.buffering.max.messages": 200_000,
                    **_size_limits(max_batch_bytes)})), now)
            if session:
                self._open[session] = (found[0], now)
            return found[0]

    def close(self, session: str) -> None:
        with self._lock:
            found = self._open.pop(session, None) if session else None
        if found is not None:
            found[0].flush(5)


batch_producers = BatchProducers()
