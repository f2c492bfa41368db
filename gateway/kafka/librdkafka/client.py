"""Client factory: one AdminClient per cluster configuration, with timeouts that bound every call."""

from __future__ import annotations

import logging
import threading
import time

from confluent_kafka import Consumer, KafkaError
from confluent_kafka.admin import AdminClient

from gateway.kafka import reachability
from gateway.kafka.types import ClusterConnection

# librdkafka reconnects quickly and gives up on a silent socket well before our request timeout.
_BOUNDED_DEFAULTS = {
    "socket.connection.setup.timeout.ms": 3000,
    "reconnect.backoff.ms": 100,
    "reconnect.backoff.max.ms": 1000,
    "log.connection.close": False,
}

# librdkafka logs go to Python logging (drained on each call) instead of flooding stderr while a cluster is down.
_librdkafka_log = logging.getLogger("gateway.kafka.librdkafka")
_librdkafka_log.addHandler(logging.NullHandler())  # silent unless logging is configured for it (LIBRDKAFKA_LOG_LEVEL)

_admins: dict[tuple, AdminClient] = {}
_admins_lock = threading.Lock()
_lookup_consumers: dict[tuple, Consumer] = {}
LOOKUP_GROUP = "kafka-console-offset-lookup"  # never joined, never committed to
LOOKUP_METADATA_AGE_MS = 30_000
# The last connection-level error librdkafka reported per cluster (bad credentials, TLS refused...): a request
# that then times out says why instead of "did not answer".
_last_errors: dict[str, tuple[float, KafkaError]] = {}
_ERROR_MEMORY_S = 30.0


def client_config(connection: ClusterConnection, **overrides: object) -> dict[str, object]:
    """The librdkafka configuration shared by admin clients, consumers and producers of a cluster."""
    config: dict[str, object] = {**_BOUNDED_DEFAULTS, **connection.config}
    config["bootstrap.servers"] = connection.bootstrap_servers
    config["logger"] = _librdkafka_log
    config.update(overrides)
    return config


def _error_callback(cluster: str):
    def remember(error: KafkaError) -> None:
        if error.code() != KafkaError._ALL_BROKERS_DOWN:  # a consequence, never the reason
            _last_errors[cluster] = (time.monotonic(), error)

    return remember


def admin_client(connection: ClusterConnection) -> AdminClient:
    key = (connection.name, connection.bootstrap_servers, tuple(sorted(connection.config.items())), connection.lane)
    with _admins_lock:
        admin = _admins.get(key)
        if admin is None:
            admin = AdminClient({**client_config(connection), "error_cb": _error_callback(connection.name)})
            _admins[key] = admin
        return admin


def lookup_consumer(connection: ClusterConnection, isolation: str) -> Consumer:
    """A consumer that only looks offsets up (librdkafka/offset_lookup.py), one per cluster and isolation level.
    It never subscribes, joins its group or commits: librdkafka only wants a group id to make a consumer."""
    key = (connection.name, connection.bootstrap_servers, tuple(sorted(connection.config.items())), isolation,
           connection.lane)
    with _admins_lock:
        consumer = _lookup_consumers.get(key)
        if consumer is None:
            consumer = Consumer(client_config(connection, **{
                "group.id": LOOKUP_GROUP, "isolation.level": isolation, "enable.auto.commit": False,
                # What it knows of topics (that one does not exist, say) is asked again after this long, not 15 min.
                "metadata.max.age.ms": LOOKUP_METADATA_AGE_MS}))
            _lookup_consumers[key] = consumer
        return consumer


def recent_connection_error(connection: ClusterConnection) -> KafkaError | None:
    """What librdkafka last reported about reaching this cluster, if it was lately."""
    entry = _last_errors.get(connection.name)
    if entry and time.monotonic() - entry[0] < _ERROR_MEMORY_S:
        return entry[1]
    return None


def forget_connection_error(connection: ClusterConnection) -> None:
    _last_errors.pop(connection.name, None)


def forget_clients() -> None:
    """Drops this process's cached clients and reachability marks: what a client process does when asked to forget
    (gateway.kafka.reset.forget_clients asks them, after doing this in its own process)."""
    with _admins_lock:
        _admins.clear()
        _lookup_consumers.clear()
    reachability.forget()
    _last_errors.clear()
