"""Groups of every type: consumer (classic and KIP-848), share and streams."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.kafka.types.cluster import BrokerInfo
from gateway.kafka.types.topics import PartitionRef


# Kafka's own names for group states; KIP-848 "Assigning"/"Reconciling" reach librdkafka as "Unknown".
INACTIVE_GROUP_STATES = frozenset({"Empty", "Dead"})


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    state: str
    protocol: str  # "classic", "consumer" or "unknown"
    simple: bool = False
    group_type: str = ""  # classic, consumer, share or streams, when listed by Kafka's own ListGroups (Java)


@dataclass(frozen=True)
class MemberInfo:
    member_id: str
    client_id: str
    host: str
    instance_id: str | None
    assignment: tuple[PartitionRef, ...]
    target_assignment: tuple[PartitionRef, ...] | None = None


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    protocol: str
    assignor: str
    coordinator: BrokerInfo | None
    members: tuple[MemberInfo, ...]
    simple: bool = False

    @property
    def inactive(self) -> bool:
        """Whether offsets may be changed: Kafka's tool allows it only for Empty and Dead groups."""
        return self.state in INACTIVE_GROUP_STATES


@dataclass(frozen=True)
class ShareMember:
    member_id: str
    client_id: str
    host: str
    member_epoch: int
    assignment: tuple[PartitionRef, ...]


@dataclass(frozen=True)
class ShareGroupDescription:
    group_id: str
    state: str
    coordinator: int | None
    group_epoch: int
    assignment_epoch: int
    members: tuple[ShareMember, ...]


@dataclass(frozen=True)
class SharePartitionOffset:
    """A share group's start offset on one partition (the next offset to deliver), as kafka-share-groups shows it."""

    ref: PartitionRef
    start_offset: int | None
    leader_epoch: int | None
    lag: int | None


@dataclass(frozen=True)
class StreamsSubtopology:
    subtopology_id: str
    source_topics: tuple[str, ...]
    repartition_sink_topics: tuple[str, ...]
    changelog_topics: tuple[str, ...]
    repartition_source_topics: tuple[str, ...]


@dataclass(frozen=True)
class StreamsMember:
    member_id: str
    client_id: str
    host: str
    process_id: str
    member_epoch: int
    # (subtopology id, partitions) per kind of task
    active_tasks: tuple[tuple[str, tuple[int, ...]], ...]
    standby_tasks: tuple[tuple[str, tuple[int, ...]], ...]
    warmup_tasks: tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True)
class StreamsGroupDescription:
    group_id: str
    state: str
    coordinator: int | None
    group_epoch: int
    assignment_epoch: int
    topology_epoch: int
    subtopologies: tuple[StreamsSubtopology, ...]
    members: tuple[StreamsMember, ...]


@dataclass(frozen=True)
class ProtocolMember:
    """A member of a consumer-protocol-type group as Kafka's Java Admin describes it. `upgraded` is
    MemberDescription.upgraded(): True for a member speaking the consumer protocol inside a consumer group, False
    for a classic-protocol member of a consumer group, None where the broker does not say (a classic group)."""

    member_id: str
    client_id: str
    host: str
    instance_id: str | None
    upgraded: bool | None
    member_epoch: int | None


@dataclass(frozen=True)
class ProtocolGroupDescription:
    """Which rebalance protocol a group runs on (its type, "classic" or "consumer"), its assignor (the classic
    protocol name the members agreed on, or the consumer group's server-side assignor) and its members."""

    group_id: str
    group_type: str
    state: str
    assignor: str
    members: tuple[ProtocolMember, ...]

    @property
    def classic_members(self) -> tuple[ProtocolMember, ...]:
        """Members still on the classic protocol: all of a classic group's, the not upgraded of a consumer group."""
        if self.group_type == "classic":
            return self.members
        return tuple(m for m in self.members if m.upgraded is False)
