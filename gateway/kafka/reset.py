"""Forgetting every Kafka client this process holds or uses (tests restart brokers; settings may change)."""

from __future__ import annotations

from gateway.kafka import sandbox
from gateway.kafka.librdkafka import client


def forget_clients() -> None:
    """Drops this process's cached clients and fail-fast marks, then asks every client process it uses to drop
    theirs. The transports below cannot do the second part themselves: the client processes run them."""
    client.forget_clients()
    sandbox.forget_all()
