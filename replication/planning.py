"""Replica placement plans: parsed from what a person writes, or derived for a new replication factor; checked the
way the controller would check them. Pure: no Kafka, no database."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from console.errors import ConsoleError

MSG_SYNTAX = "Write one partition per entry as PARTITION=BROKER,BROKER,... separated by ';' (got {entry!r})."
MSG_UNKNOWN_PARTITION = "Topic {topic!r} has no partition {partition}."
MSG_UNKNOWN_BROKER = "Broker {broker} is not one of the cluster's brokers ({brokers})."
MSG_DUPLICATE = "Partition {partition} lists broker {broker} twice."
MSG_EMPTY = "Partition {partition} needs at least one replica."
MSG_FACTOR = "The replication factor must be between 1 and the {brokers} live brokers."
MSG_NOTHING = "Every partition already has these replicas: nothing to move."


@dataclass(frozen=True)
class Move:
    partition: int
    current: tuple[int, ...]
    target: tuple[int, ...]

    @property
    def adding(self) -> tuple[int, ...]:
        return tuple(b for b in self.target if b not in self.current)

    @property
    def removing(self) -> tuple[int, ...]:
        return tuple(b for b in self.current if b not in self.target)

    @property
    def leader_changes(self) -> bool:
        return self.current[:1] != self.target[:1]


def parse_assignment(text: str) -> dict[int, tuple[int, ...]]:
    """'0=1,2,3; 1=2,3,1' -> {0: (1, 2, 3), 1: (2, 3, 1)}; the first broker is the preferred leader."""
    targets: dict[int, tuple[int, ...]] = {}
    for entry in filter(None, (e.strip() for e in text.replace("\n", ";").split(";"))):
        partition, sep, brokers = entry.partition("=")
        try:
            targets[int(partition)] = tuple(int(b) for b in brokers.split(",") if b.strip())
        except ValueError:
            raise ConsoleError(MSG_SYNTAX.format(entry=entry)) from None
        if not sep:
            raise ConsoleError(MSG_SYNTAX.format(entry=entry))
    return targets


def checked_moves(topic: str, current: dict[int, tuple[int, ...]], targets: dict[int, tuple[int, ...]],
                  brokers: set[int]) -> list[Move]:
    """The partitions whose replicas change, or a ConsoleError naming the first thing the controller would refuse."""
    for partition, replicas in sorted(targets.items()):
        if partition not in current:
            raise ConsoleError(MSG_UNKNOWN_PARTITION.format(topic=topic, partition=partition))
        if not replicas:
            raise ConsoleError(MSG_EMPTY.format(partition=partition))
        repeated = [b for b, n in Counter(replicas).items() if n > 1]
        if repeated:
            raise ConsoleError(MSG_DUPLICATE.format(partition=partition, broker=repeated[0]))
        for broker in replicas:
            if broker not in brokers:
                raise ConsoleError(MSG_UNKNOWN_BROKER.format(broker=broker,
                                                             brokers=", ".join(map(str, sorted(brokers)))))
    moves = [Move(p, current[p], t) for p, t in sorted(targets.items()) if tuple(current[p]) != tuple(t)]
    if not moves:
        raise ConsoleError(MSG_NOTHING)
    return moves


def replication_factor_targets(current: dict[int, tuple[int, ...]], factor: int,
                               brokers: set[int]) -> dict[int, tuple[int, ...]]:
    """Replicas for a new replication factor that move as little as possible: existing replicas stay in their order
    (so leaders stay), extra ones go to the brokers holding fewest replicas, and a lower factor drops the last."""
    if not 1 <= factor <= len(brokers):
        raise ConsoleError(MSG_FACTOR.format(brokers=len(brokers)))
    load = Counter({b: 0 for b in brokers})
    for replicas in current.values():
        load.update(b for b in replicas if b in brokers)
    targets = {}
    for partition, replicas in sorted(current.items()):
        kept = [b for b in replicas if b in brokers][:factor]
        while len(kept) < factor:
            choice = min((b for b in brokers if b not in kept), key=lambda b: (load[b], b))
            kept.append(choice)
            load[choice] += 1
        targets[partition] = tuple(kept)
    return targets


MSG_SCOPE = "Name a topic, or a topic and its partitions as TOPIC:0,2 (got {item!r})."


def parse_scope(items: list[str] | None) -> dict[str, set[int] | None] | None:
    """['orders:0,2', 'payments'] -> {'orders': {0, 2}, 'payments': None} (every partition); None: every topic.
    Topic names cannot hold ':', so the first one separates the partitions."""
    if not items:
        return None
    scope: dict[str, set[int] | None] = {}
    for item in items:
        topic, sep, partitions = item.strip().partition(":")
        if not topic:
            raise ConsoleError(MSG_SCOPE.format(item=item))
        if not sep:
            scope[topic] = None
            continue
        try:
            chosen = {int(p) for p in partitions.split(",") if p.strip()}
        except ValueError:
            raise ConsoleError(MSG_SCOPE.format(item=item)) from None
        if not chosen:
            raise ConsoleError(MSG_SCOPE.format(item=item))
        earlier = scope.get(topic, set())
        scope[topic] = None if earlier is None and topic in scope else (earlier or set()) | chosen
    return scope


def not_preferred(partitions) -> list:
    """Partitions whose leader is not their preferred replica (the first) although that replica is in sync: what a
    preferred leader election would change."""
    return [p for p in partitions
            if p.replicas and p.leader != p.replicas[0] and p.replicas[0] in p.isr]


def throttled_replicas(moves: list[Move]) -> tuple[str, str]:
    """The topic's leader and follower throttled-replica lists, as Kafka's reassignment tool sets them: the
    current replicas send (leader side), the joining ones receive (follower side)."""
    leaders = ",".join(f"{m.partition}:{b}" for m in moves for b in m.current)
    followers = ",".join(f"{m.partition}:{b}" for m in moves for b in m.adding)
    return leaders, followers
