"""What the topic table's rebuilder remembers from one rebuild to the next: each topic's id and its partitions' log
start offsets, so that a rebuild asks Kafka only for the starts that may have moved.

A log end moves with every message, so every rebuild asks every partition's end. A log start moves only when
retention drops a segment or someone deletes records, so a rebuild asks starts only for:
- a topic it does not know by id: new, or deleted and created again under its name (a new id);
- a partition it has no start of (partitions added, or its start could not be read last time);
- a topic the console changed since the remembered rebuild (the shared table's changes name it);
- the topics whose turn it is: one in TOPIC_SNAPSHOT_START_ROUNDS by name, so that retention's moves show within
  that many rebuilds (brokers look for segments to delete every log.retention.check.interval.ms, 5 min by default);
- a remembered start past the end just read (asked again at once: such a count would be wrong).

Kept in Redis under one key per cluster that only the rebuilder reads, written under the table's rebuild lock;
while Redis does not answer, each process remembers its own.
"""

from __future__ import annotations

import json
import logging
import threading
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import redis
from django.conf import settings

from console.shared_table_stores import redis_client, redis_failed
from gateway.kafka.types import PartitionRef, TopicMetadata

log = logging.getLogger(__name__)

FORMAT = 1  # bump when the stored layout changes; older memories are then ignored (every start asked once)


@dataclass(frozen=True)
class Memory:
    version: str  # the connection it was read with (console.shared_table.connection_version)
    taken_at: float  # when the rebuild that read it started
    turn: int  # that rebuild's turn: the next one re-reads the starts of turn + 1's share
    topics: dict[str, tuple[str, tuple[int | None, ...]]]  # name -> (topic id, log start per partition or None)


@dataclass(frozen=True)
class Plan:
    known: dict[PartitionRef, int]  # remembered starts that stand
    ask: list[PartitionRef]  # partitions whose starts are asked now


def in_turn(name: str, turn: int, rounds: int) -> bool:
    """Pure: whether the topic's starts are re-read on this turn (every topic once in `rounds` turns)."""
    return zlib.crc32(name.encode()) % max(1, rounds) == turn % max(1, rounds)


def plan(topics: Iterable[TopicMetadata], ids: dict[str, str], memory: Memory | None, *, changed: set[str],
         turn: int, rounds: int) -> Plan:
    """Pure: which starts a rebuild reuses and which it asks (see the module's docstring for the rules)."""
    known: dict[PartitionRef, int] = {}
    ask: list[PartitionRef] = []
    remembered = memory.topics if memory is not None else {}
    for topic in topics:
        refs = [PartitionRef(topic.name, p.partition) for p in topic.partitions]
        kept = remembered.get(topic.name)
        topic_id = ids.get(topic.name)
        if kept is None or topic_id is None or kept[0] != topic_id or topic.name in changed \
                or in_turn(topic.name, turn, rounds):
            ask.extend(refs)
            continue
        starts = kept[1]
        for ref in refs:
            start = starts[ref.partition] if ref.partition < len(starts) else None
            if start is None:
                ask.append(ref)
            else:
                known[ref] = start
    return Plan(known=known, ask=ask)


def past_their_end(known: dict[PartitionRef, int], ends: dict[PartitionRef, int]) -> list[PartitionRef]:
    """Pure: remembered starts beyond the end just read (the log was cut, or deleted and made again in between)."""
    return [ref for ref, start in known.items() if ref in ends and start > ends[ref]]


def remember(topics: Iterable[TopicMetadata], ids: dict[str, str], starts: dict[PartitionRef, int], *,
             version: str, taken_at: float, turn: int) -> Memory:
    """Pure: what the next rebuild may reuse: topics known by id only (a topic without one is asked again)."""
    kept = {}
    for topic in topics:
        topic_id = ids.get(topic.name)
        if topic_id is not None:
            partitions = max((p.partition for p in topic.partitions), default=-1) + 1
            kept[topic.name] = (topic_id, tuple(starts.get(PartitionRef(topic.name, p)) for p in range(partitions)))
    return Memory(version=version, taken_at=taken_at, turn=turn, topics=kept)


def renamed_or_new(memory: Memory | None, ids: dict[str, str]) -> list[str]:
    """Pure: the names whose topic is not the one remembered: new ones, and ones deleted and created again."""
    remembered = memory.topics if memory is not None else {}
    return [name for name, topic_id in ids.items() if name not in remembered or remembered[name][0] != topic_id]


def encode(memory: Memory) -> bytes:
    document = {"format": FORMAT, "version": memory.version, "taken_at": memory.taken_at, "turn": memory.turn,
                "topics": {name: [topic_id, list(starts)] for name, (topic_id, starts) in memory.topics.items()}}
    return zlib.compress(json.dumps(document, separators=(",", ":")).encode(), 6)


def decode(blob: bytes) -> Memory | None:
    """The memory, or None for one of another format or a torn blob (every start is then asked once)."""
    try:
        document = json.loads(zlib.decompress(blob))
    except (zlib.error, ValueError):
        return None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return None
    return Memory(version=document["version"], taken_at=document["taken_at"], turn=document["turn"],
                  topics={name: (topic_id, tuple(starts)) for name, (topic_id, starts) in document["topics"].items()})


# --- where it is kept ------------------------------------------------------------------------------------------

_own: dict[str, Memory] = {}  # cluster -> this process's memory, while Redis does not answer
_own_lock = threading.Lock()


def _key(cluster: str) -> str:
    return f"console:topics:log-starts:{len(cluster)}:{cluster}"


def read(cluster: str, version: str) -> Memory | None:
    """The cluster's memory for these connection settings, or None (the rebuild then asks every start)."""
    found = None
    client = redis_client(settings.REDIS_URL)
    if client is not None:
        try:
            blob = client.get(_key(cluster))
            found = decode(blob) if blob is not None else None
        except redis.RedisError as exc:
            redis_failed(exc)
            client = None
    if client is None:
        with _own_lock:
            found = _own.get(cluster)
    return found if found is not None and found.version == version else None


def write(cluster: str, memory: Memory) -> None:
    client = redis_client(settings.REDIS_URL)
    if client is not None:
        try:
            client.set(_key(cluster), encode(memory))
            with _own_lock:
                _own.pop(cluster, None)
            return
        except redis.RedisError as exc:
            redis_failed(exc)
    with _own_lock:
        _own[cluster] = memory


def forget(cluster: str) -> None:
    """For tests and benchmarks: the next rebuild asks every start."""
    with _own_lock:
        _own.pop(cluster, None)
    client = redis_client(settings.REDIS_URL)
    if client is not None:
        try:
            client.delete(_key(cluster))
        except redis.RedisError as exc:
            redis_failed(exc)
