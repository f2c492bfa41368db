"""The one place where confluent-kafka futures are waited on and their errors mapped."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Hashable, Mapping
from typing import Any, TypeVar

from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.librdkafka.mapping import map_exception

K = TypeVar("K", bound=Hashable)


def future_result(future: concurrent.futures.Future, *, cluster: str, timeout: float) -> Any:
    """Waits for one future, never longer than `timeout` plus a small grace, and maps its error."""
    try:
        return future.result(timeout=timeout + 1.0)
    except concurrent.futures.TimeoutError as exc:
        raise map_exception(TimeoutError(str(exc)), cluster=cluster, timeout=timeout) from exc
    except Exception as exc:  # confluent-kafka raises KafkaException, ValueError, TypeError...
        raise map_exception(exc, cluster=cluster, timeout=timeout) from exc


def futures_results(futures: Mapping[K, concurrent.futures.Future], *, cluster: str, timeout: float) -> dict[K, Any]:
    """Waits for every future of a batch call; the first failure raises."""
    return {key: future_result(f, cluster=cluster, timeout=timeout) for key, f in futures.items()}


def futures_outcomes(
    futures: Mapping[K, concurrent.futures.Future], *, cluster: str, timeout: float
) -> dict[K, Any | KafkaGatewayError]:
    """Like futures_results, but keeps each key's own error so one bad item does not hide the others."""
    outcomes: dict[K, Any | KafkaGatewayError] = {}
    for key, future in futures.items():
        try:
            outcomes[key] = future_result(future, cluster=cluster, timeout=timeout)
        except KafkaGatewayError as exc:
            outcomes[key] = exc
    return outcomes
