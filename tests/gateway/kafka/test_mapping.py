"""Error mapping, without a broker: every librdkafka code family lands on its named exception."""

import pytest
from confluent_kafka import KafkaError, KafkaException

from gateway.kafka import errors
from gateway.kafka.librdkafka.mapping import kafka_error_to_exception, map_exception


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (KafkaError._TRANSPORT, errors.ClusterUnavailable),
        (KafkaError._TIMED_OUT, errors.ClusterUnavailable),
        (KafkaError.REQUEST_TIMED_OUT, errors.ClusterUnavailable),
        (KafkaError.UNKNOWN_TOPIC_OR_PART, errors.TopicNotFound),
        (KafkaError.GROUP_ID_NOT_FOUND, errors.GroupNotFound),
        (KafkaError.NON_EMPTY_GROUP, errors.GroupNotEmpty),
        (KafkaError.UNKNOWN_MEMBER_ID, errors.GroupNotEmpty),
        (KafkaError.INVALID_CONFIG, errors.InvalidConfig),
        (KafkaError.POLICY_VIOLATION, errors.InvalidConfig),
        (KafkaError.INVALID_PARTITIONS, errors.InvalidRequest),
        (KafkaError.INVALID_REPLICATION_FACTOR, errors.InvalidRequest),
        (KafkaError.TOPIC_ALREADY_EXISTS, errors.TopicAlreadyExists),
        (KafkaError.TOPIC_AUTHORIZATION_FAILED, errors.NotAuthorized),
        (KafkaError.GROUP_AUTHORIZATION_FAILED, errors.NotAuthorized),
        (KafkaError.CLUSTER_AUTHORIZATION_FAILED, errors.NotAuthorized),
        (KafkaError.SASL_AUTHENTICATION_FAILED, errors.NotAuthorized),
        (KafkaError.UNSUPPORTED_VERSION, errors.KafkaRequestFailed),
    ],
)
def test_kafka_error_codes_map_to_named_exceptions(code, expected):
    mapped = map_exception(KafkaException(KafkaError(code, "broker says no")), cluster="c1", timeout=3)

    assert type(mapped) is expected
    assert mapped.cluster == "c1"
    assert mapped.code == KafkaError(code).name()


def test_invalid_config_keeps_the_brokers_own_message():
    text = "Invalid value abc for configuration retention.ms: Not a number of type LONG"
    mapped = map_exception(KafkaException(KafkaError(KafkaError.INVALID_CONFIG, text)), cluster="c1")

    assert mapped.message == text


def test_unreachable_message_names_cluster_and_timeout():
    mapped = map_exception(KafkaException(KafkaError(KafkaError._TRANSPORT, "Connection refused")), cluster="prod",
                           timeout=3)

    assert mapped.message == "Cluster 'prod' did not answer within 3 s (Connection refused)."


def test_partition_errors_list_each_failed_partition():
    exc = errors.PartitionErrors([errors.PartitionError("orders", p, "NOT_LEADER", "not leader") for p in range(12)])

    assert exc.message.startswith("12 partition(s) failed: orders-0: not leader, orders-1: not leader")
    assert exc.message.endswith("and 2 more")
    assert len(exc.errors) == 12


@pytest.mark.parametrize("code, moving", [
    (KafkaError.COORDINATOR_LOAD_IN_PROGRESS, True), (KafkaError.NOT_COORDINATOR, True),
    (KafkaError.COORDINATOR_NOT_AVAILABLE, True), (KafkaError._TRANSPORT, False), (KafkaError._TIMED_OUT, False),
    (KafkaError.GROUP_AUTHORIZATION_FAILED, False),
])
def test_a_coordinator_loading_or_moving_is_told_from_a_cluster_that_does_not_answer(code, moving):
    from gateway.kafka.librdkafka.mapping import coordinator_moving

    assert coordinator_moving(kafka_error_to_exception(KafkaError(code), cluster="c", timeout=3)) is moving
    assert coordinator_moving(None) is False
