"""Which clusters this process has just found down, whatever client found it: while the mark lasts, calls to that
cluster fail at once (librdkafka's and the Java Admin's alike), so a page with several calls waits only once."""

from __future__ import annotations

import time

from gateway.kafka import errors
from gateway.kafka.types import ClusterConnection

_down_until: dict[str, tuple[float, str]] = {}


def check_not_known_unreachable(connection: ClusterConnection) -> None:
    entry = _down_until.get(connection.name)
    if entry and time.monotonic() < entry[0]:
        raise errors.ClusterUnavailable(entry[1], code="_TRANSPORT", cluster=connection.name)


def mark_unreachable(connection: ClusterConnection, message: str, backoff_s: float) -> None:
    _down_until[connection.name] = (time.monotonic() + backoff_s, message)


def known_down_for(connection: ClusterConnection) -> float:
    """How much longer this process fails the cluster's calls at once (0: it does not)."""
    entry = _down_until.get(connection.name)
    return max(0.0, entry[0] - time.monotonic()) if entry else 0.0


def mark_reachable(connection: ClusterConnection) -> None:
    _down_until.pop(connection.name, None)


def forget() -> None:
    _down_until.clear()
