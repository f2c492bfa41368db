"""The bounded call wrapper shared by every group of admin operations."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import TypeVar

from confluent_kafka.admin import AdminClient

from gateway.kafka.errors import (MSG_SLOW_REQUEST, ClusterUnavailable, KafkaGatewayError, PartitionError,
                                  PartitionErrors)
from gateway.kafka import reachability
from gateway.kafka.librdkafka import client
from gateway.kafka.librdkafka.futures import future_result, futures_outcomes, futures_results
from gateway.kafka.librdkafka.mapping import coordinator_moving, explain_unavailable, map_exception
from gateway.kafka.types import GatewayFace, ItemFailure

T = TypeVar("T")
K = TypeVar("K")
# Requests one call keeps in flight at most. librdkafka sends whatever it is handed at once: 50,000 OffsetFetch
# requests (one per group; it allows no more in one) queued together killed the client process with SIGSEGV.
MAX_IN_FLIGHT = 1000
# Objects per DeleteTopics, CreatePartitions, IncrementalAlterConfigs or DeleteGroups request of a batch; the
# requests of one batch go one after another.
BATCH_OBJECTS = 100
PROBE_S = 0.75  # what a timed-out call adds to ask whether the cluster answers at all


class AdminBase(GatewayFace):
    def _call(self, operation: Callable[[AdminClient], T]) -> T:
        """Runs `operation` with the cluster's AdminClient, mapping errors and remembering unreachability."""
        reachability.check_not_known_unreachable(self.connection)
        admin = client.admin_client(self.connection)
        try:
            result = operation(admin)
        except Exception as exc:
            admin.poll(0)  # serves error_cb, so a refused login is known before the error is mapped
            mapped = map_exception(exc, cluster=self.cluster, timeout=self.timeout)
            if isinstance(mapped, ClusterUnavailable):
                cause = client.recent_connection_error(self.connection)
                if cause is None and self._answers_probe(admin):
                    # One request too big for its bound (every partition of a large cluster, say) says nothing
                    # about the cluster: other pages must not fail fast because of it.
                    mapped = ClusterUnavailable(MSG_SLOW_REQUEST.format(cluster=self.cluster, timeout=self.timeout,
                                                                        detail=mapped.message),
                                                code="_SLOW_REQUEST", cluster=self.cluster)
                else:
                    mapped = explain_unavailable(mapped, cause)
                    reachability.mark_unreachable(self.connection, mapped.message, self.unreachable_backoff)
            raise mapped from exc
        admin.poll(0)
        reachability.mark_reachable(self.connection)
        client.forget_connection_error(self.connection)
        return result

    def _answers_probe(self, admin: AdminClient) -> bool:
        """Whether the cluster answers a small request (DescribeCluster) within PROBE_S."""
        try:
            admin.describe_cluster(request_timeout=PROBE_S).result(timeout=PROBE_S + 0.5)
            return True
        except Exception:  # noqa: BLE001 - any failure means no sign of life
            return False

    def _wait(self, future):
        return future_result(future, cluster=self.cluster, timeout=self.timeout)

    def _wait_all(self, futures):
        return futures_results(futures, cluster=self.cluster, timeout=self.timeout)

    def _wait_each(self, futures):
        return futures_outcomes(futures, cluster=self.cluster, timeout=self.timeout)

    def _wait_each_settled(self, send: Callable[[list[K]], Mapping[K, Future]], keys: list[K]) -> dict:
        """Each key's outcome (its result or its error) of the requests `send(keys)` makes, at most
        MAX_IN_FLIGHT keys at a time; keys whose group coordinator was loading or moving are sent again, after a
        growing pause, until the call's timeout."""
        outcomes: dict = {}
        for start in range(0, len(keys), MAX_IN_FLIGHT):
            outcomes.update(self._settle(send, keys[start:start + MAX_IN_FLIGHT]))
        return outcomes

    def _settle(self, send: Callable[[list[K]], Mapping[K, Future]], keys: list[K]) -> dict:
        deadline, pause = time.monotonic() + self.timeout, 0.1
        outcomes: dict = {}
        pending = list(keys)
        while pending:
            fetched = self._wait_each(send(pending))
            outcomes.update(fetched)
            pending = [key for key, outcome in fetched.items() if coordinator_moving(outcome)]
            if not pending or time.monotonic() + pause >= deadline:
                break
            time.sleep(pause)
            pause = min(pause * 2, 1.0)
        return outcomes

    def _item_failures(self, outcomes: dict) -> dict:
        """Each refused object of a batch as an ItemFailure; raises instead when every object timed out (the
        cluster did not answer, which says nothing about the objects)."""
        failures = {name: o for name, o in outcomes.items() if isinstance(o, KafkaGatewayError)}
        if failures and len(failures) == len(outcomes) and all(
                isinstance(o, ClusterUnavailable) for o in failures.values()):
            raise next(iter(failures.values()))
        return {name: ItemFailure(name=name, code=o.code, message=o.message) for name, o in failures.items()}

    def _raise_partition_failures(self, outcomes: dict) -> None:
        """Raises for failed partitions of a batch; the cluster counts as unreachable only if every one timed out."""
        failures = {ref: o for ref, o in outcomes.items() if isinstance(o, KafkaGatewayError)}
        if failures and len(failures) == len(outcomes) and all(isinstance(o, ClusterUnavailable) for o in failures.values()):
            raise next(iter(failures.values()))
        if failures:
            raise PartitionErrors(
                [PartitionError(ref.topic, ref.partition, o.code, o.message) for ref, o in sorted(failures.items())],
                cluster=self.cluster,
            )
