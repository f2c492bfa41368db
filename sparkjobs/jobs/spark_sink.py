"""Exactly-once writes of a replay into a topic. Spark's own Kafka sink is at least once (a retried task writes its
records again), so the replay application writes through this module instead, inside its executors; it is shipped
to them with `--py-files` and imports no Django.

Each Spark task owns one transactional id derived from the job and the task's partition index, which a retried
attempt shares: its `init_transactions` fences the attempt before it and aborts whatever that attempt left open,
so an attempt that failed leaves nothing a `read_committed` reader can see. The transaction also commits, through
a consumer group of the task's own, the number of records it wrote; a retry that finds that commit knows an
earlier attempt already committed (it died after committing, before Spark heard of it) and writes nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

# In the executors from the gateway's zip (sparkjobs.runner.GATEWAY_MODULES), like the registry decoding.
from gateway.kafka.librdkafka.mapping import COORDINATOR_MOVING_CODES

# Long enough for one task's share of a large replay; a task killed with its transaction open is cleaned up by
# its retry or by the driver's fencing when the job fails, not by waiting for this.
TRANSACTION_TIMEOUT_MS = 300_000
PREFIX = "console-replay"
# Throughput: librdkafka's defaults (5 ms linger, 10,000 records a batch) make many small requests, each an
# append to the open transaction; a replay is a bulk copy, so larger, compressed batches and fewer poll calls.
PRODUCER_TUNING = {"linger.ms": 50, "batch.num.messages": 100_000, "batch.size": 4_000_000,
                   "queue.buffering.max.messages": 1_000_000, "compression.type": "lz4"}
POLL_EVERY = 2_000


@dataclass(frozen=True)
class SinkTarget:
    bootstrap: str
    config: dict
    topic: str
    keep_partitions: bool
    job_key: str  # the job id and a part of its correlation id: ids never repeat across databases
    timeout_s: float


def task_id(target: SinkTarget, task: int) -> str:
    """Both the task's transactional id and the group in which its transaction records that it committed."""
    return f"{PREFIX}-{target.job_key}-{task}"


def _client_config(target: SinkTarget, **extra) -> dict:
    return {**target.config, "bootstrap.servers": target.bootstrap, **extra}


def write_task(rows, target: SinkTarget, task: int, *, crash_after: int | None = None) -> int:
    """Writes one task's rows (key, value, headers, partition) in one transaction; returns how many records the
    task committed, by this attempt or by an earlier one (whose count its commit recorded; then this attempt
    writes nothing). `crash_after` kills the Python worker mid-write, with the transaction open: the test's
    stand-in for an executor dying."""
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        return 0
    name = task_id(target, task)
    producer = Producer(_client_config(target, **{**PRODUCER_TUNING, "transactional.id": name,
                                                  "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS}))
    producer.init_transactions(target.timeout_s)
    marker = Consumer(_client_config(target, **{"group.id": name, "enable.auto.commit": False,
                                                "isolation.level": "read_committed"}))
    try:
        done = _committed(marker, target)
        if done >= 0:
            return done
        producer.begin_transaction()
        written = 0
        try:
            for row in _chain(first, rows):
                _produce(producer, target, row)
                written += 1
                if written % POLL_EVERY == 0:
                    producer.poll(0)
                if crash_after is not None and written == crash_after:
                    producer.flush(target.timeout_s)  # the records are in the log, inside the open transaction
                    os._exit(3)
            producer.send_offsets_to_transaction([TopicPartition(target.topic, 0, written)],
                                                 marker.consumer_group_metadata(), target.timeout_s)
            producer.commit_transaction(target.timeout_s)
        except BaseException:
            try:
                producer.abort_transaction(target.timeout_s)
            except KafkaException:
                pass  # fenced or the broker is gone: the next attempt or the driver's fencing aborts it
            raise
        return written
    finally:
        marker.close()


def _committed(marker: Consumer, target: SinkTarget) -> int:
    """The count an earlier attempt committed, or -1; asked again until the timeout while the group's coordinator
    loads or moves."""
    deadline = time.monotonic() + target.timeout_s
    while True:
        try:
            return marker.committed([TopicPartition(target.topic, 0)], timeout=target.timeout_s)[0].offset
        except KafkaException as error:
            if error.args[0].code() not in COORDINATOR_MOVING_CODES or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _chain(first, rest):
    yield first
    yield from rest


def _produce(producer: Producer, target: SinkTarget, row) -> None:
    # By position: a Row's attribute access searches its field names, per record.
    key, value, headers, partition = row[0], row[1], row[2], row[3]
    key = bytes(key) if key is not None else None  # Spark hands binary columns over as bytearray
    value = bytes(value) if value is not None else None
    if headers:
        headers = [(h[0], bytes(h[1]) if h[1] is not None else None) for h in headers]
    else:
        headers = None
    if not target.keep_partitions:
        partition = -1
    while True:
        try:
            producer.produce(target.topic, key=key, value=value, headers=headers, partition=partition)
            break
        except BufferError:  # the local queue is full: wait for deliveries
            producer.poll(0.1)


def fence_tasks(target: SinkTarget, tasks: int) -> None:
    """After a failed job: aborts any transaction one of its tasks left open, so readers are not held back."""
    for task in range(tasks):
        producer = Producer(_client_config(target, **{"transactional.id": task_id(target, task),
                                                      "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS}))
        try:
            producer.init_transactions(target.timeout_s)
        except KafkaException:
            return  # the cluster does not answer: asking for the other tasks would only wait as long again; the
            # coordinator aborts what is left open after TRANSACTION_TIMEOUT_MS


def forget_tasks(target: SinkTarget, tasks: int) -> None:
    """Deletes the tasks' marker groups once the job has succeeded: they only matter while tasks may retry."""
    admin = AdminClient(_client_config(target))
    futures = admin.delete_consumer_groups([task_id(target, t) for t in range(tasks)],
                                           request_timeout=target.timeout_s)
    for future in futures.values():
        try:
            future.result()
        except KafkaException:
            pass  # a task that had no records made no group
