"""Client factory: one AdminClient per cluster configuration, with timeouts that bound every call."""

from __future__ import annotations

import logging
import threading
import time

from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient

from console.kafka import errors
from console.kafka.types import ClusterConnection

# librdkafka reconnects quickly and gives up on a silent socket well before our request timeout.
_BOUNDED_DEFAULTS = {
    "socket.connection.setup.timeout.ms": 3000,
    "reconnect.backoff.ms": 100,
    "reconnect.backoff.max.ms": 1000,
    "log.connection.close": False,
}

# librdkafka logs go to Python logging (drained on each call) instead of flooding stderr while a cluster is down.
_librdkafka_log = logging.getLogger("console.kafka.librdkafka")
_librdkafka_log.addHandler(logging.NullHandler())  # silent unless logging is configured for it (LIBRDKAFKA_LOG_LEVEL)

_admins: dict[tuple, AdminClient] = {}
_admins_lock = threading.Lock()
_unreachable_until: dict[str, tuple[float, str]] = {}
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
    key = (connection.name, connection.bootstrap_servers, tuple(sorted(connection.config.items())))
    with _admins_lock:
        admin = _admins.get(key)
        if admin is None:
            admin = AdminClient({**client_config(connection), "error_cb": _error_callback(connection.name)})
            _admins[key] = admin
        return admin


def recent_connection_error(connection: ClusterConnection) -> KafkaError | None:
    """What librdkafka last reported about reaching this cluster, if it was lately."""
    entry = _last_errors.get(connection.name)
    if entry and time.monotonic() - entry[0] < _ERROR_MEMORY_S:
        return entry[1]
    return None


def forget_connection_error(connection: ClusterConnection) -> None:
    _last_errors.pop(connection.name, None)


def check_not_known_unreachable(connection: ClusterConnection) -> None:
    """Fails fast while a cluster is known to be down, so a page with several calls waits only once."""
    entry = _unreachable_until.get(connection.name)
    if entry and time.monotonic() < entry[0]:
        raise errors.ClusterUnavailable(entry[1], code="_TRANSPORT", cluster=connection.name)


def mark_unreachable(connection: ClusterConnection, message: str, backoff_s: float) -> None:
    _unreachable_until[connection.name] = (time.monotonic() + backoff_s, message)


def mark_reachable(connection: ClusterConnection) -> None:
    _unreachable_until.pop(connection.name, None)


def forget_clients() -> None:
    """Drops cached clients and reachability (tests restart brokers; settings may change)."""
    with _admins_lock:
        _admins.clear()
    _unreachable_until.clear()
    _last_errors.clear()
    from console.kafka import sandbox  # the children hold clients too

    sandbox.forget_all()
