"""Publishing to the witness topic on the real broker: in order, once each, past a killed publisher's open
transaction, beside a second publisher, never past a forged row, and again after the broker comes back."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from confluent_kafka import KafkaError, KafkaException
from django.db import connection

from console.audit.actor import Actor
from console.audit.chain import GENESIS_HASH, HASHED_FIELDS, fields_hash
from console.audit.models import AuditEvent, WitnessState
from console.witness.hanging import MSG_HELD
from console.witness.publisher import MSG_HASH, witness_publish
from console.witness.records import event_record
from console.witness.status import witness_status
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import ClusterConnection
from tests.fixtures.faults import kill_broker, start_broker
from tests.fixtures.kafka import begin_transaction
from tests.console.witness.conftest import append_events, read_witness

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _publish():
    return witness_publish(actor=Actor.system())


def test_events_are_published_in_order_keyed_by_seq_and_verifiable_with_the_key(witness, kafka_node):
    events = append_events(3)

    first = _publish()
    append_events(2)
    second = _publish()

    bodies = read_witness(kafka_node.bootstrap, witness.topic)
    # The topic was created by the first run, and that creation is itself an audited event (#4 and #5).
    assert [b["seq"] for b in bodies] == list(range(1, 8))
    assert (first.published, first.up_to, second.published, second.up_to) == (5, 5, 2, 7)
    assert [b["action"] for b in bodies[3:5]] == ["audit.witness.create"] * 2
    assert bodies[0]["prev_hash"] == GENESIS_HASH and bodies[1]["prev_hash"] == bodies[0]["hash"]
    assert bodies[0]["hash"] == events[0].hash == fields_hash({name: bodies[0][name] for name in HASHED_FIELDS})
    assert bodies[2]["params"] == {"i": 2} and bodies[2]["target"] == "topic:t2"
    status = witness_status()
    assert (status.state.published_seq, status.pending, status.condition) == (7, 0, "ok")


def test_a_killed_publishers_open_batch_is_fenced_and_nothing_is_repeated(witness, kafka_node):
    append_events(2)
    _publish()  # 1-4, the topic's creation included
    append_events(2)
    # A publisher killed after producing 5-6 and before committing: its transaction is still open.
    zombie = begin_transaction(kafka_node.bootstrap, witness.topic,
                               [event_record(e)[1] for e in AuditEvent.objects.filter(seq__gt=4).order_by("seq")],
                               transactional_id=witness.transactional_id)
    WitnessState.objects.all().delete()  # and nothing noted in the database: the topic is the truth

    result = _publish()

    assert (result.published, result.up_to) == (2, 6)
    assert [b["seq"] for b in read_witness(kafka_node.bootstrap, witness.topic)] == [1, 2, 3, 4, 5, 6]
    with pytest.raises(KafkaException) as fenced:  # the new publisher took its transactional id
        zombie.commit_transaction(10)
    assert fenced.value.args[0].code() == KafkaError._FENCED and fenced.value.args[0].fatal()


@pytest.mark.django_db(transaction=True)
def test_two_publishers_at_once_write_each_event_once(witness, kafka_node, settings):
    settings.AUDIT_WITNESS_BATCH = 20
    append_events(150)
    results, errors = [], []

    def publisher():
        try:
            results.append(_publish())
        except Exception as exc:  # noqa: BLE001 - the assertion below shows it
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=publisher) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert not errors
    while _publish().published:  # whatever a fenced round left over
        pass
    seqs = [b["seq"] for b in read_witness(kafka_node.bootstrap, witness.topic)]
    assert seqs == list(range(1, AuditEvent.objects.count() + 1))


def test_a_forged_row_is_not_published_and_is_reported(witness, kafka_node):
    events = append_events(2)
    forged = AuditEvent(seq=3, created_at=events[1].created_at, actor_name="mallory", source="web",
                        action="topic.delete", target="topic:orders", outcome="success", prev_hash=events[1].hash,
                        hash="f" * 64)
    forged.save()

    result = _publish()

    assert result.blocked_seq == 3 and result.up_to == 2
    assert [b["seq"] for b in read_witness(kafka_node.bootstrap, witness.topic)] == [1, 2]
    state = WitnessState.objects.get()
    assert state.blocked_reason == MSG_HASH.format(seq=3)
    assert witness_status().condition == "broken"


def _open_transaction(bootstrap: str, topic: str, *, age_s: float):
    """Another producer's transaction left open, its record stamped `age_s` ago (as a hanging one would be)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"stray-{uuid.uuid4().hex}"})
    producer.init_transactions(15)
    producer.begin_transaction()
    producer.produce(topic, value=b"stray", partition=0, timestamp=int((time.time() - age_s) * 1000))
    producer.flush(15)
    return producer


def test_a_hanging_transaction_is_aborted_audited_and_publishing_goes_on(witness, kafka_node):
    append_events(1)
    _publish()  # 1-3
    _open_transaction(kafka_node.bootstrap, witness.topic, age_s=120)
    append_events(1)

    result = _publish()

    assert result.error == "" and result.up_to == AuditEvent.objects.count()
    abort = AuditEvent.objects.filter(action="audit.witness.abort-hanging").order_by("seq")
    assert [e.outcome for e in abort] == ["intent", "success"]
    assert abort[0].params["producers"][0]["start_offset"] == 4  # after 1-3 and their commit marker
    assert [b["seq"] for b in read_witness(kafka_node.bootstrap, witness.topic)] == list(range(1, result.up_to + 1))


def test_a_young_open_transaction_is_left_to_its_coordinator(witness, kafka_node):
    append_events(1)
    _publish()
    stray = _open_transaction(kafka_node.bootstrap, witness.topic, age_s=0)
    append_events(1)

    result = _publish()
    stray.abort_transaction(10)

    assert result.published == 0 and result.error == MSG_HELD.format(offset=4, timeout=20)
    assert not AuditEvent.objects.filter(action="audit.witness.abort-hanging").exists()


@pytest.mark.slow
def test_publishing_resumes_after_the_broker_comes_back_with_nothing_lost_or_repeated(fragile, settings):
    settings.AUDIT_WITNESS_CLUSTER = "fragile"
    settings.AUDIT_WITNESS_TOPIC = "audit-witness-fragile"
    KafkaAdmin(ClusterConnection("fragile", fragile.bootstrap), timeout=10).create_topic(
        "audit-witness-fragile", partitions=1, replication_factor=1, configs={})
    append_events(3)
    assert _publish().up_to == 3

    kill_broker(fragile)
    append_events(2)
    started = time.monotonic()
    down = _publish()
    elapsed = time.monotonic() - started

    assert down.error and down.up_to == 3 and elapsed < 20
    assert witness_status().pending == 2 and WitnessState.objects.get().error == down.error
    start_broker(fragile)
    # A kill right after a commit can lose its marker: the publisher then waits out the transaction timeout and
    # aborts the hanging batch before it writes again.
    deadline = time.monotonic() + 90
    while (result := _publish()).up_to < AuditEvent.objects.count():  # as beat would, every few seconds, until the cluster answers
        assert time.monotonic() < deadline, result.error
        time.sleep(1)
    seqs = [b["seq"] for b in read_witness(fragile.bootstrap, "audit-witness-fragile")]
    assert seqs == list(range(1, AuditEvent.objects.count() + 1)) and len(seqs) >= 5
    assert WitnessState.objects.get().error == ""
