"""The one face of Kafka Connect: ConnectClient speaks a Connect cluster's REST API (transport.py holds the HTTP,
its bounds and retries) and returns the frozen values of types.py; errors.py is what it raises. Nothing else in the
console sends HTTP to a Connect worker."""

from gateway.kafka_connect.client import ConnectClient
from gateway.kafka_connect.transport import ConnectEndpoint, forget_unreachable

__all__ = ["ConnectClient", "ConnectEndpoint", "forget_unreachable"]
