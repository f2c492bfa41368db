"""Helpers of the Connect tests: records read back from a topic, files that fill up, connector config."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


def read_values(bootstrap: str, topic: str, *, at_least: int, timeout: float = 60.0, config: dict | None = None):
    """Every record value of partition 0 of `topic` from its start, once there are at least `at_least`."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.monotonic_ns()}",
                         "enable.auto.commit": False, **(config or {})})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value().decode())
            elif message is None and len(values) >= at_least:
                return values
        raise AssertionError(f"{topic} held {len(values)} records, not {at_least}, after {timeout:.0f} s: {values}")
    finally:
        consumer.close()


def wait_lines(path: Path, count: int, timeout: float = 60.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return lines
        time.sleep(0.3)
    raise AssertionError(f"{path} has {len(lines)} lines, not {count}, after {timeout:.0f} s")


@pytest.fixture
def connect_operator(operator, client_for, connect_cluster):
    return client_for(operator)
