"""Operations confluent-kafka-python does not offer, done by Kafka's own command-line tools from the fetched jars.

Only DeleteConsumerGroupOffsets (KIP-496) so far: `kafka-consumer-groups --delete-offsets`. The tool exits 0 even
when partitions fail, so each row of its result table is read.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from django.conf import settings

from gateway.kafka.errors import ClusterUnavailable, GroupNotFound, KafkaRequestFailed, MSG_GROUP_NOT_FOUND
from gateway.kafka.java.config import java_client_config, properties_text
from gateway.kafka.types import ClusterConnection, PartitionRef
from gateway.secret_files import temporary_secret_file

GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


@dataclass(frozen=True)
class DeleteOffsetsRow:
    ref: PartitionRef | None  # None when the tool could not name a partition (unknown topic)
    topic: str
    error: str | None


def _java(main_class: str, args: list[str], timeout: float) -> subprocess.CompletedProcess:
    libs = settings.KAFKA_TOOLS_LIBS
    if not os.path.isdir(libs):
        raise KafkaRequestFailed(f"Kafka's tools are not installed here (no {libs}); set KAFKA_TOOLS_LIBS.")
    command = ["java", "-Xmx256m", "-cp", f"{libs}/*", main_class, *args]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise ClusterUnavailable(f"Kafka's tool did not finish within {timeout:g} s.", code="_TIMED_OUT") from exc


def delete_group_offsets(connection: ClusterConnection, group: str, topic: str, partitions: list[int] | None, *,
                         timeout: float) -> list[DeleteOffsetsRow]:
    """OffsetDelete through the tool; the broker refuses partitions of topics an active group subscribes to."""
    spec = topic + (":" + ",".join(map(str, partitions)) if partitions else "")
    # The client settings may carry SASL secrets.
    with temporary_secret_file(properties_text(java_client_config(connection.config)),
                               suffix=".properties") as client_config:
        result = _java(GROUP_COMMAND, [
            "--bootstrap-server", connection.bootstrap_servers, "--command-config", str(client_config),
            "--delete-offsets", "--group", group, "--topic", spec, "--timeout", str(int(timeout * 1000)),
        ], timeout=timeout + 30)
    rows = _rows(result.stdout)
    if not rows:
        raise KafkaRequestFailed((result.stdout + result.stderr).strip()[-1000:] or "Kafka's tool printed nothing.",
                                 cluster=connection.name)
    if all(r.error and "GroupIdNotFoundException" in r.error for r in rows):
        raise GroupNotFound(MSG_GROUP_NOT_FOUND.format(group=group, cluster=connection.name), cluster=connection.name)
    return rows


def _rows(stdout: str) -> list[DeleteOffsetsRow]:
    lines = stdout.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["TOPIC", "PARTITION", "STATUS"])
    except StopIteration:
        return []
    rows = []
    for line in lines[start + 1:]:
        parts = line.split(None, 2)
        if len(parts) < 3:
            continue
        topic, partition, status = parts
        ref = PartitionRef(topic, int(partition)) if partition.lstrip("-").isdigit() and partition != "-" else None
        error = None if status.strip() == "Successful" else status.strip().removeprefix("Error: ")
        rows.append(DeleteOffsetsRow(ref=ref, topic=topic, error=error))
    return rows
