"""Reads a page of records from one partition without joining a group or committing anything."""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer, KafkaError, TopicPartition

from console.kafka.client import client_config
from console.kafka.mapping import kafka_error_to_exception
from console.kafka.types import ClusterConnection, RecordInfo

_TIMESTAMP_TYPES = {0: "none", 1: "create-time", 2: "log-append-time"}


def read_records(connection: ClusterConnection, topic: str, partition: int, *, start: int, limit: int,
                 end: int, timeout: float) -> list[RecordInfo]:
    """Records [start, min(start+limit, end)) of one partition.

    librdkafka insists on a group.id even for assign-only consumers; a throwaway id is never joined or committed
    to, because the consumer only assigns and auto-commit and offset storing are off.
    """
    stop = min(end, start + limit)
    if stop <= start:
        return []
    consumer = Consumer(client_config(
        connection,
        **{"group.id": f"console-browse-{uuid.uuid4().hex}", "enable.auto.commit": False,
           "enable.auto.offset.store": False, "enable.partition.eof": True, "auto.offset.reset": "earliest",
           "isolation.level": "read_uncommitted", "fetch.wait.max.ms": 100},
    ))
    records: list[RecordInfo] = []
    deadline = time.monotonic() + timeout
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        while time.monotonic() < deadline:
            batch = consumer.consume(num_messages=min(500, stop - start), timeout=0.5)
            for message in batch:
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        return records
                    raise kafka_error_to_exception(error, cluster=connection.name, timeout=timeout)
                if message.offset() >= stop:
                    return records
                ts_type, ts = message.timestamp()
                records.append(RecordInfo(
                    topic=topic, partition=partition, offset=message.offset(),
                    timestamp=ts if ts_type else None, timestamp_type=_TIMESTAMP_TYPES.get(ts_type, "none"),
                    key=message.key(), value=message.value(), headers=tuple(message.headers() or ()),
                ))
                if message.offset() + 1 >= stop:
                    return records
        return records
    finally:
        consumer.close()
