"""The base of every error a gateway raises (Kafka's, Kafka Connect's): a message meant for people. The platform
renders them (console/errors.py) beside its own error family, which the gateway, the lowest layer, never imports."""

from __future__ import annotations


class GatewayError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
