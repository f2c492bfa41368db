"""Turns librdkafka errors into the gateway's named exceptions."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException

from gateway.kafka import errors

_UNAVAILABLE = {
    KafkaError._TRANSPORT,
    KafkaError._TIMED_OUT,
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError._RESOLVE,
    KafkaError._WAIT_COORD,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError.NETWORK_EXCEPTION,
    KafkaError.BROKER_NOT_AVAILABLE,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
}
# Partition-level and passing: worth one more try after librdkafka refreshed its metadata.
RETRIABLE_PARTITION_CODES = frozenset({
    "NOT_LEADER_FOR_PARTITION", "LEADER_NOT_AVAILABLE", "REPLICA_NOT_AVAILABLE", "FENCED_LEADER_EPOCH",
    "UNKNOWN_LEADER_EPOCH", "OFFSET_NOT_AVAILABLE", "UNKNOWN_TOPIC_OR_PART", "_UNKNOWN_PARTITION",
})
_NOT_AUTHORIZED = {
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.GROUP_AUTHORIZATION_FAILED,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    KafkaError.SASL_AUTHENTICATION_FAILED,
    KafkaError._AUTHENTICATION,
    KafkaError.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
}
_TOPIC_NOT_FOUND = {KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC, KafkaError._UNKNOWN_PARTITION}
_INVALID_CONFIG = {KafkaError.INVALID_CONFIG, KafkaError.POLICY_VIOLATION}
_INVALID_REQUEST = {
    KafkaError.INVALID_PARTITIONS,
    KafkaError.INVALID_REPLICATION_FACTOR,
    KafkaError.INVALID_REPLICA_ASSIGNMENT,
    KafkaError.TOPIC_EXCEPTION,
    KafkaError.INVALID_REQUEST,
    KafkaError._INVALID_ARG,
    KafkaError.OFFSET_OUT_OF_RANGE,
    KafkaError.INVALID_COMMIT_OFFSET_SIZE,
    KafkaError.TOPIC_DELETION_DISABLED,
}
_GROUP_NOT_EMPTY = {KafkaError.NON_EMPTY_GROUP, KafkaError.UNKNOWN_MEMBER_ID, KafkaError.REBALANCE_IN_PROGRESS}
_FENCED = {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH}

# Codes present only in newer librdkafka builds are looked up by name so an older wheel still imports.
for _name, _bucket in (("UNKNOWN_TOPIC_ID", _TOPIC_NOT_FOUND), ("GROUP_ID_NOT_FOUND", None)):
    if hasattr(KafkaError, _name) and _bucket is not None:
        _bucket.add(getattr(KafkaError, _name))
_GROUP_NOT_FOUND = {getattr(KafkaError, "GROUP_ID_NOT_FOUND", -10_000)}


# A group coordinator loading its share of __consumer_offsets (a broker just restarted) or moving: the broker
# answered, and the same request succeeds a moment later.
COORDINATOR_MOVING_CODES = frozenset({KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.NOT_COORDINATOR,
                                      KafkaError.COORDINATOR_NOT_AVAILABLE})
_COORDINATOR_MOVING_NAMES = frozenset(KafkaError(code).name() for code in COORDINATOR_MOVING_CODES)


def coordinator_moving(outcome) -> bool:
    """Whether a group request's outcome is its coordinator loading or moving (see COORDINATOR_MOVING_CODES)."""
    return isinstance(outcome, errors.ClusterUnavailable) and outcome.code in _COORDINATOR_MOVING_NAMES


def kafka_error_to_exception(err: KafkaError, *, cluster: str = "", timeout: float = 0.0) -> errors.KafkaGatewayError:
    code = err.code()
    name = err.name() or str(code)
    text = err.str() or name
    cls: type[errors.KafkaGatewayError]
    if code in _UNAVAILABLE:
        message = errors.MSG_UNREACHABLE.format(cluster=cluster, timeout=timeout, detail=text)
        return errors.ClusterUnavailable(message, code=name, cluster=cluster)
    if code in _NOT_AUTHORIZED:
        cls = errors.NotAuthorized
    elif code in _TOPIC_NOT_FOUND:
        cls = errors.TopicNotFound
    elif code in _GROUP_NOT_FOUND:
        cls = errors.GroupNotFound
    elif code in _GROUP_NOT_EMPTY:
        cls = errors.GroupNotEmpty
    elif code in _FENCED:
        cls = errors.ProducerFenced
    elif code == KafkaError.TOPIC_ALREADY_EXISTS:
        cls = errors.TopicAlreadyExists
    elif code in _INVALID_CONFIG:
        cls = errors.InvalidConfig
    elif code in _INVALID_REQUEST:
        cls = errors.InvalidRequest
    else:
        cls = errors.KafkaRequestFailed
    return cls(text, code=name, cluster=cluster)


def map_exception(exc: BaseException, *, cluster: str = "", timeout: float = 0.0) -> errors.KafkaGatewayError:
    """Maps whatever a confluent-kafka call or future raised."""
    if isinstance(exc, errors.KafkaGatewayError):
        return exc
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return kafka_error_to_exception(exc.args[0], cluster=cluster, timeout=timeout)
    if isinstance(exc, TimeoutError):
        message = errors.MSG_UNREACHABLE.format(cluster=cluster, timeout=timeout, detail="timed out")
        return errors.ClusterUnavailable(message, code="_TIMED_OUT", cluster=cluster)
    if isinstance(exc, ValueError):
        return errors.InvalidRequest(str(exc), code="INVALID_ARGUMENT", cluster=cluster)
    return errors.KafkaRequestFailed(f"{type(exc).__name__}: {exc}", cluster=cluster)


# Connection-level errors that say why a cluster "did not answer": the login or the TLS handshake was refused.
_REFUSED_LOGIN = {KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED}
_TLS_REFUSED = {KafkaError._SSL}


def explain_unavailable(exc: errors.ClusterUnavailable, cause: KafkaError | None) -> errors.KafkaGatewayError:
    """A timeout with a refused login behind it becomes NotAuthorized; a TLS failure keeps its own words."""
    if cause is None:
        return exc
    text = cause.str() or cause.name()
    if cause.code() in _REFUSED_LOGIN:
        message = errors.MSG_LOGIN_REFUSED.format(cluster=exc.cluster, detail=text)
        return errors.NotAuthorized(message, code=cause.name(), cluster=exc.cluster)
    if cause.code() in _TLS_REFUSED or "SSL" in text or "certificate" in text.lower():
        message = errors.MSG_TLS_REFUSED.format(cluster=exc.cluster, detail=text)
        return errors.ClusterUnavailable(message, code=cause.name(), cluster=exc.cluster)
    return exc
