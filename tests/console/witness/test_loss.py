"""A witness topic that holds less than was published to it, on the real broker: purged and then the newest rows
deleted from the database, deleted and re-created empty. Each is an alarm that stays, never a restart from #1;
and the pure rule the publisher and audit_verify share."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from console.audit.actor import Actor
from console.audit.models import AuditCheck, WitnessState
from console.witness.compare import MESSAGES, Kind
from console.witness.loss import MSG_BEHIND, MSG_GONE, MSG_RECREATED, REASON_LOST, TopicView, find_loss
from console.errors import ConsoleError
from console.witness.publisher import witness_publish
from console.witness.records import Link
from console.witness.verify import absence_rule
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.errors import KafkaGatewayError, TopicNotFound
from gateway.kafka.types import LATEST, ClusterConnection, PartitionRef
from tests.console.witness.conftest import append_events, read_witness


def _admin(kafka_node) -> KafkaAdmin:
    return KafkaAdmin(ClusterConnection("test", kafka_node.bootstrap), timeout=10)


def _sql(statement: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement)


def _verify_fails(capsys) -> str:
    with pytest.raises(CommandError) as raised:
        call_command("audit_verify")
    return capsys.readouterr().err + str(raised.value)


def _delete_topic(admin: KafkaAdmin, topic: str) -> None:
    admin.delete_topic(topic)
    deadline = time.monotonic() + 15
    while True:
        try:
            admin.describe_topics([topic])
        except TopicNotFound:
            return
        assert time.monotonic() < deadline, "the deleted topic still shows"
        time.sleep(0.2)


def _create_topic(admin: KafkaAdmin, topic: str, configs: dict) -> None:
    """Creating a name whose deletion the controller is still finishing is refused for a moment; once created, the
    partition is led before the test reads it (on a busy machine a read right away found no leader yet)."""
    deadline = time.monotonic() + 15
    while True:
        try:
            admin.create_topic(topic, partitions=1, replication_factor=1, configs=configs)
            break
        except KafkaGatewayError:
            assert time.monotonic() < deadline, "the topic could not be created again"
            time.sleep(0.3)
    while True:
        try:
            admin.list_offsets([PartitionRef(topic, 0)], LATEST)
            return
        except KafkaGatewayError:
            assert time.monotonic() < deadline, "the created topic got no leader"
            time.sleep(0.2)


@pytest.fixture
def published(witness, kafka_node):
    """Events #1-#5 published in one transaction (offsets 0-4, its marker at 5), on a topic that keeps records
    forever: nothing but a purge can remove them."""
    _admin(kafka_node).create_topic(witness.topic, partitions=1, replication_factor=1,
                                    configs={"retention.ms": "-1", "retention.bytes": "-1"})
    append_events(5)
    assert witness_publish(actor=Actor.system()).up_to == 5
    return witness


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_purged_witness_then_the_newest_rows_deleted_is_reported_by_verify_health_and_the_page(
        published, kafka_node, capsys, client, client_for, viewer):
    admin, ref = _admin(kafka_node), PartitionRef(published.topic, 0)
    admin.delete_records({ref: admin.list_offsets([ref], LATEST)[ref].offset})  # DeleteRecords to the end
    _sql("DELETE FROM audit_auditevent WHERE seq IN (4, 5)")

    err = _verify_fails(capsys)

    assert "witness: " + MESSAGES[Kind.MISSING_TAIL].format(seqs="#4-#5") in err
    assert "the witness topic lost published records #1-#5" in err and "BROKEN" in err
    assert client.get("/health").json()["audit_witness"]["state"] == "broken"  # all an anonymous caller sees
    health = client_for(viewer).get("/health").json()["audit_witness"]
    assert (health["state"], health["reason"], health["lost_seqs"]) == ("broken", REASON_LOST, [1, 5])
    page = client.get("/audit/").content.decode()
    assert "the witness topic lost published records #1-#5" in page
    append_events(1)
    again = witness_publish(actor=Actor.system())
    assert again.published == 0 and "lost published records #1-#5" in again.error
    assert read_witness(kafka_node.bootstrap, published.topic) == []


@pytest.mark.kafka
@pytest.mark.django_db
def test_rows_purged_from_the_front_under_infinite_retention_are_reported(published, kafka_node, capsys):
    _admin(kafka_node).delete_records({PartitionRef(published.topic, 0): 3})  # #1-#3 gone, #4-#5 kept

    err = _verify_fails(capsys)

    assert "witness: " + MESSAGES[Kind.PURGED].format(seqs="#1-#3") in err
    assert not WitnessState.objects.get().lost  # the topic still ends where it did: no alarm, only the finding
    assert AuditCheck.objects.get().findings[0]["kind"] == Kind.PURGED


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_deleted_then_recreated_witness_is_never_filled_again_from_the_first_event(published, kafka_node,
                                                                                      client_for, viewer):
    admin = _admin(kafka_node)
    _delete_topic(admin, published.topic)

    gone = witness_publish(actor=Actor.system())

    assert gone.published == 0 and MSG_GONE.format(high=5) in gone.error
    with pytest.raises(TopicNotFound):  # the publisher did not create it again
        admin.describe_topics([published.topic])
    _create_topic(admin, published.topic, {})
    append_events(2)
    later = witness_publish(actor=Actor.system())
    assert later.published == 0 and "lost published records #1-#5" in later.error
    assert read_witness(kafka_node.bootstrap, published.topic) == []
    state = WitnessState.objects.get()
    assert (state.lost_first_seq, state.lost_last_seq, state.high_seq) == (1, 5, 5)
    assert client_for(viewer).get("/health").json()["audit_witness"]["reason"] == REASON_LOST


@pytest.mark.kafka
@pytest.mark.django_db
def test_recreated_and_refilled_by_someone_else_is_caught_by_its_topic_id(published, kafka_node):
    admin = _admin(kafka_node)
    _delete_topic(admin, published.topic)
    _create_topic(admin, published.topic, {})
    # Offsets as far as before, so only the topic's id tells: a consumer of the old topic would not notice either.
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka_node.bootstrap})
    for i in range(10):
        producer.produce(published.topic, key=b"x", value=b"{}", partition=0)
    producer.flush(10)

    result = witness_publish(actor=Actor.system())

    assert result.published == 0 and "re-created" in WitnessState.objects.get().lost_reason


# The pure rule, without a broker.

def _state(**fields) -> WitnessState:
    return WitnessState(cluster="c", topic="t", **fields)


@given(high=st.integers(1, 10**9), offset=st.integers(0, 10**9), extra=st.integers(1, 10**6),
       ahead=st.integers(0, 10**6))
def test_a_topic_that_reaches_the_mark_is_no_loss(high, offset, extra, ahead):
    state = _state(high_seq=high, high_offset=offset, topic_id="a")
    view = TopicView(stable_end=offset + extra, last_seq=high + ahead, topic_id="a")

    assert find_loss(state, view, expiry_explains=lambda: pytest.fail("not asked when records remain")) is None


@given(high=st.integers(1, 10**9), offset=st.integers(0, 10**9), short=st.integers(0, 10**9),
       accepted=st.integers(0, 10**9))
def test_a_topic_ending_at_or_below_the_marks_offset_lost_up_to_the_mark(high, offset, short, accepted):
    state = _state(high_seq=high, high_offset=offset, accepted_through=min(accepted, high - 1))
    view = TopicView(stable_end=max(0, offset - short), last_seq=None, topic_id=None)

    loss = find_loss(state, view, expiry_explains=lambda: True)

    assert loss is not None and loss.last_seq == high and 1 <= loss.first_seq <= high


def test_the_same_topic_reading_short_waits_and_a_new_one_is_a_loss():
    state = _state(high_seq=7, high_offset=9, topic_id="a")

    with pytest.raises(ConsoleError) as waiting:
        find_loss(state, TopicView(stable_end=0, last_seq=None, topic_id="a"), expiry_explains=lambda: False)
    loss = find_loss(state, TopicView(stable_end=0, last_seq=None, topic_id="b"), expiry_explains=lambda: False)

    assert waiting.value.message == MSG_BEHIND.format(end=0, offset=9, high=7)
    assert (loss.first_seq, loss.last_seq, loss.reason) == (1, 7, MSG_RECREATED.format(old="a", new="b"))


def test_an_emptied_topic_is_a_loss_unless_retention_explains_it():
    state = _state(high_seq=7, high_offset=9, accepted_through=2)
    view = TopicView(stable_end=12, last_seq=None, topic_id=None)

    assert (find_loss(state, view, expiry_explains=lambda: False).first_seq, 7) == (3, 7)
    assert find_loss(state, view, expiry_explains=lambda: True) is None
    assert find_loss(_state(high_seq=7, high_offset=None), None, expiry_explains=lambda: False) is None


def _link(seq: int, age: timedelta) -> Link:
    return Link(seq=seq, hash="h", prev_hash="p", body={"created_at": (timezone.now() - age).isoformat()})


def test_absence_before_the_first_record_is_explained_by_retention_or_a_reset_only():
    now = timezone.now()
    old, new = _link(5, timedelta(days=8)), _link(6, timedelta(hours=1))
    week = 7 * 86_400_000

    by_time = absence_rule(log_start=10, retention_ms=week, retention_bytes=-1, accepted_through=0, now=now)
    forever = absence_rule(log_start=10, retention_ms=-1, retention_bytes=-1, accepted_through=0, now=now)
    by_size = absence_rule(log_start=10, retention_ms=-1, retention_bytes=10**6, accepted_through=0, now=now)
    never_removed = absence_rule(log_start=0, retention_ms=week, retention_bytes=-1, accepted_through=5, now=now)

    assert (by_time(old), by_time(new)) == (True, False)
    assert (forever(old), forever(new)) == (False, False)
    assert (by_size(old), by_size(new)) == (True, True)
    assert (never_removed(old), never_removed(new)) == (True, False)
