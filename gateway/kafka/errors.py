"""Named exceptions for everything Kafka can refuse, so callers never inspect librdkafka codes."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.errors import GatewayError


class KafkaGatewayError(GatewayError):
    """Base of every error the Kafka gateway raises. `message` is meant for people."""

    def __init__(self, message: str, *, code: str = "", cluster: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.cluster = cluster


class ClusterUnavailable(KafkaGatewayError):
    """No broker answered within the bounded timeout."""


class NotAuthorized(KafkaGatewayError):
    """The cluster refused the credentials or an ACL denied the operation."""


class TopicNotFound(KafkaGatewayError):
    pass


class TopicAlreadyExists(KafkaGatewayError):
    pass


class GroupNotFound(KafkaGatewayError):
    pass


class GroupNotEmpty(KafkaGatewayError):
    """The group has live members, so its offsets cannot be changed or the group deleted."""


class InvalidRequest(KafkaGatewayError):
    """The broker rejected the request's content (partitions, replication factor, topic name...)."""


class InvalidConfig(InvalidRequest):
    """The broker rejected a configuration value; `message` is the broker's own text."""


class RegistryError(KafkaGatewayError):
    """The schema registry refused a request or did not answer; `status` is its HTTP status, 0 when unreachable."""

    def __init__(self, message: str, *, code: str = "", cluster: str = "", status: int = 0) -> None:
        super().__init__(message, code=code, cluster=cluster)
        self.status = status

    def __reduce__(self):  # crosses the client process's pipe with its code and status
        return (_rebuild_registry_error, (self.message, self.code, self.cluster, self.status))


def _rebuild_registry_error(message: str, code: str, cluster: str, status: int) -> RegistryError:
    return RegistryError(message, code=code, cluster=cluster, status=status)


class ProducerFenced(KafkaGatewayError):
    """A newer producer with the same transactional.id started: this one's transaction was aborted, not written."""


class KafkaRequestFailed(KafkaGatewayError):
    """Any other error, with the Kafka error name kept in `code`."""


@dataclass(frozen=True)
class PartitionError:
    topic: str
    partition: int
    code: str
    message: str


class PartitionErrors(KafkaGatewayError):
    """A request succeeded as a whole but some partitions failed; each one is listed."""

    def __init__(self, errors: list[PartitionError], *, cluster: str = "") -> None:
        listed = ", ".join(f"{e.topic}-{e.partition}: {e.message or e.code}" for e in errors[:10])
        more = f" and {len(errors) - 10} more" if len(errors) > 10 else ""
        super().__init__(f"{len(errors)} partition(s) failed: {listed}{more}", code="PARTITION_ERRORS", cluster=cluster)
        self.errors = errors

    def __reduce__(self):  # answers cross a process boundary (gateway.kafka.sandbox)
        return (_rebuild_partition_errors, (self.errors, self.cluster))


def _rebuild_partition_errors(errors: list[PartitionError], cluster: str) -> PartitionErrors:
    return PartitionErrors(errors, cluster=cluster)


MSG_UNREACHABLE = "Cluster '{cluster}' did not answer within {timeout:g} s ({detail})."
MSG_SLOW_REQUEST = ("Cluster '{cluster}' is up, but this request did not finish within {timeout:g} s ({detail}); "
                    "the cluster's other pages are not held back by it.")
MSG_LOGIN_REFUSED = "Cluster '{cluster}' refused the console's credentials ({detail})."
MSG_TLS_REFUSED = "Cluster '{cluster}' could not be reached over TLS ({detail})."
MSG_MISSING_SECRET = "Cluster '{cluster}' needs the environment variable {env} for {key}, and it is not set."
MSG_TOPIC_NOT_FOUND = "Topic '{topic}' does not exist on cluster '{cluster}'."
MSG_GROUP_NOT_FOUND = "Consumer group '{group}' does not exist on cluster '{cluster}'."
