"""What a Connect worker's REST API can answer besides success, as gateway errors the platform renders like its own
(console/errors.py: the error partial for views, one line for commands)."""

from __future__ import annotations

from gateway.errors import GatewayError

MSG_UNAVAILABLE = "Kafka Connect '{name}' ({url}) did not answer within {timeout:.0f} s: {detail}"
MSG_REBALANCING = ("Kafka Connect '{name}' is rebalancing (it answered 409 {attempts} times): try again in a few "
                   "seconds. Connect said: {detail}")
MSG_AUTH = "Kafka Connect '{name}' refused the console's credentials (HTTP {status}): {detail}"
MSG_TLS = ("Kafka Connect '{name}' and the console did not agree on TLS ({detail}): check the CA file, and the client "
           "certificate and key the worker asks for.")
MSG_NOT_FOUND = "Kafka Connect '{name}' has no {what}: {detail}"
MSG_REFUSED = "Kafka Connect '{name}' refused the request (HTTP {status}): {detail}"
MSG_SERVER = "Kafka Connect '{name}' failed the request (HTTP {status}): {detail}"
MSG_NOT_JSON = "Kafka Connect '{name}' answered HTTP {status} with a body that is not JSON: {detail}"


class ConnectError(GatewayError):
    """Anything a Connect worker answered other than success, or its silence. `http_status` is Connect's own
    status (0 when it did not answer); `status` is what the console answers its caller."""

    status = 502

    def __init__(self, message: str, *, connect: str = "", http_status: int = 0) -> None:
        super().__init__(message)
        self.connect, self.http_status = connect, http_status


class ConnectUnavailable(ConnectError):
    """Down, unreachable, frozen or too slow: no answer within the request timeout."""

    status = 503


class ConnectRebalancing(ConnectError):
    """409 on every attempt: a rebalance (or a concurrent config change) went on longer than the retries."""

    status = 409


class ConnectAuthFailed(ConnectError):
    status = 403


class ConnectNotFound(ConnectError):
    """404: no such connector, task or plugin."""

    status = 404


class ConnectRefused(ConnectError):
    """Any other 4xx: a bad configuration, a connector that exists already, offsets that may not change now.
    The message carries Connect's own words."""

    status = 400
