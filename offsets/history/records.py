"""Decoding of `__consumer_offsets` records (Kafka's coordinator record format), pure and without a Kafka client.

key   = int16 record type, then the key struct (never flexible)
value = int16 version, then the value struct; a null value is a tombstone
Schemas: group-coordinator `common/message/*.json` of Kafka 4.3.1 (types 0-8; others are skipped).
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass


class RecordDecodeError(ValueError):
    pass


class Reader:
    """Kafka's wire primitives: big-endian integers, (compact) strings, bytes, arrays, varints, tagged fields."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise RecordDecodeError(f"record truncated at byte {self.pos} (wanted {n})")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int8(self) -> int:
        return struct.unpack(">b", self._take(1))[0]

    def int16(self) -> int:
        return struct.unpack(">h", self._take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def int64(self) -> int:
        return struct.unpack(">q", self._take(8))[0]

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            byte = self._take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 35:
                raise RecordDecodeError("varint too long")

    def uuid(self) -> str:
        return str(uuid.UUID(bytes=self._take(16)))

    def string(self, *, compact: bool = False, nullable: bool = False) -> str | None:
        length = self.uvarint() - 1 if compact else self.int16()
        if length < 0:
            if nullable:
                return None
            raise RecordDecodeError("null in a non-nullable string")
        return self._take(length).decode("utf-8")

    def bytes_(self, *, compact: bool = False) -> bytes | None:
        length = self.uvarint() - 1 if compact else self.int32()
        return None if length < 0 else self._take(length)

    def array_length(self, *, compact: bool = False) -> int:
        length = self.uvarint() - 1 if compact else self.int32()
        return max(0, length)

    def skip_tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self._take(self.uvarint())


@dataclass(frozen=True)
class OffsetCommit:
    group: str
    topic: str
    partition: int
    offset: int | None  # None: tombstone (offset deleted or expired)
    commit_timestamp: int | None = None


@dataclass(frozen=True)
class ClassicMember:
    member_id: str
    instance_id: str | None
    client_id: str
    host: str
    session_timeout: int
    rebalance_timeout: int
    assignment: tuple[tuple[str, int], ...]  # (topic, partition), from the consumer-protocol assignment bytes


@dataclass(frozen=True)
class ClassicGroup:
    group: str
    protocol_type: str | None = None
    generation: int | None = None
    protocol: str | None = None
    leader: str | None = None
    state_timestamp: int | None = None
    members: tuple[ClassicMember, ...] = ()
    tombstone: bool = False


@dataclass(frozen=True)
class GroupEpoch:
    group: str
    epoch: int | None  # None: tombstone (group deleted)
    protocol: str = "consumer"  # or "share": the same record shapes with the share-group record types


@dataclass(frozen=True)
class MemberMetadata:
    group: str
    member_id: str
    instance_id: str | None = None
    client_id: str = ""
    host: str = ""
    subscribed_topics: tuple[str, ...] = ()
    classic: bool = False  # a classic-protocol member inside a consumer group
    tombstone: bool = False


@dataclass(frozen=True)
class TargetAssignmentEpoch:
    group: str
    epoch: int | None
    protocol: str = "consumer"


@dataclass(frozen=True)
class MemberPartitions:
    """Target (type 7) or current (type 8) assignment of one member; partitions by topic id."""

    group: str
    member_id: str
    kind: str  # "target" or "current"
    partitions: tuple[tuple[str, int], ...] = ()  # (topic id, partition)
    member_epoch: int | None = None
    previous_member_epoch: int | None = None
    state: int | None = None
    pending_revocation: tuple[tuple[str, int], ...] = ()
    tombstone: bool = False


@dataclass(frozen=True)
class Skipped:
    record_type: int


def decode_assignment(data: bytes | None) -> tuple[tuple[str, int], ...]:
    """ConsumerProtocolAssignment v0-3 (int16 version, then topics with partitions; user data ignored)."""
    if not data:
        return ()
    reader = Reader(data)
    reader.int16()
    pairs = []
    for _ in range(reader.array_length()):
        topic = reader.string()
        for _ in range(reader.array_length()):
            pairs.append((topic, reader.int32()))
    return tuple(sorted(pairs))


def _offset_commit(key: Reader, value: bytes | None) -> OffsetCommit:
    group, topic, partition = key.string(), key.string(), key.int32()
    if value is None:
        return OffsetCommit(group, topic, partition, None)
    r = Reader(value)
    version = r.int16()
    if version > 4:
        raise RecordDecodeError(f"OffsetCommitValue version {version} is newer than this decoder")
    offset = r.int64()
    if version >= 3:
        r.int32()  # leader epoch
    r.string(compact=version >= 4)  # metadata
    timestamp = r.int64()
    return OffsetCommit(group, topic, partition, offset, timestamp)


def _classic_group(key: Reader, value: bytes | None) -> ClassicGroup:
    group = key.string()
    if value is None:
        return ClassicGroup(group, tombstone=True)
    r = Reader(value)
    version = r.int16()
    if version > 4:
        raise RecordDecodeError(f"GroupMetadataValue version {version} is newer than this decoder")
    flexible = version >= 4
    protocol_type = r.string(compact=flexible)
    generation = r.int32()
    protocol = r.string(compact=flexible, nullable=True)
    leader = r.string(compact=flexible, nullable=True)
    state_timestamp = r.int64() if version >= 2 else None
    members = []
    for _ in range(r.array_length(compact=flexible)):
        member_id = r.string(compact=flexible)
        instance_id = r.string(compact=flexible, nullable=True) if version >= 3 else None
        client_id, host = r.string(compact=flexible), r.string(compact=flexible)
        rebalance_timeout = r.int32() if version >= 1 else -1
        session_timeout = r.int32()
        r.bytes_(compact=flexible)  # subscription
        assignment = r.bytes_(compact=flexible)
        if flexible:
            r.skip_tagged_fields()
        consumer = protocol_type == "consumer"
        members.append(ClassicMember(member_id, instance_id, client_id, host, session_timeout, rebalance_timeout,
                                     decode_assignment(assignment) if consumer else ()))
    return ClassicGroup(group, protocol_type, generation, protocol, leader, state_timestamp, tuple(members))


def _topic_partitions(r: Reader) -> tuple[tuple[str, int], ...]:
    pairs = []
    for _ in range(r.array_length(compact=True)):
        topic_id = r.uuid()
        for _ in range(r.array_length(compact=True)):
            pairs.append((topic_id, r.int32()))
        r.skip_tagged_fields()  # e.g. AssignmentEpochs (tag 0) since Kafka 4.3
    return tuple(sorted(pairs))


def _flexible_value(value: bytes) -> Reader:
    r = Reader(value)
    version = r.int16()
    if version != 0:
        raise RecordDecodeError(f"consumer-group record value version {version} is newer than this decoder")
    return r


def decode_record(key: bytes | None, value: bytes | None):
    """One `__consumer_offsets` record as a dataclass; record types the console does not use come back Skipped."""
    if not key:
        raise RecordDecodeError("record without a key")
    k = Reader(key)
    record_type = k.int16()
    if record_type in (0, 1):
        return _offset_commit(k, value)
    if record_type == 2:
        return _classic_group(k, value)
    if record_type == 3:
        group = k.string()
        return GroupEpoch(group, None if value is None else _flexible_value(value).int32())
    if record_type == 5:
        group, member_id = k.string(), k.string()
        if value is None:
            return MemberMetadata(group, member_id, tombstone=True)
        r = _flexible_value(value)
        instance_id = r.string(compact=True, nullable=True)
        r.string(compact=True, nullable=True)  # rack
        client_id, host = r.string(compact=True), r.string(compact=True)
        topics = tuple(r.string(compact=True) for _ in range(r.array_length(compact=True)))
        r.string(compact=True, nullable=True)  # regex
        r.int32()  # rebalance timeout
        r.string(compact=True, nullable=True)  # server assignor
        classic = False
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            classic = classic or tag == 0
            r._take(size)
        return MemberMetadata(group, member_id, instance_id, client_id, host, topics, classic)
    if record_type == 6:
        group = k.string()
        return TargetAssignmentEpoch(group, None if value is None else _flexible_value(value).int32())
    if record_type in (7, 8):
        group, member_id = k.string(), k.string()
        kind = "target" if record_type == 7 else "current"
        if value is None:
            return MemberPartitions(group, member_id, kind, tombstone=True)
        r = _flexible_value(value)
        if record_type == 7:
            return MemberPartitions(group, member_id, kind, _topic_partitions(r))
        epoch, previous, state = r.int32(), r.int32(), r.int8()
        assigned, pending = _topic_partitions(r), _topic_partitions(r)
        return MemberPartitions(group, member_id, kind, assigned, epoch, previous, state, pending)
    if record_type in SHARE_RECORD_TYPES:
        return _share_record(record_type, k, value)
    return Skipped(record_type)


# Offset commits are nearly every record of the topic, and the recorder keeps only a count and the latest commit
# time per group of them: these two read exactly that at its fixed place in the key and the value, without a Reader,
# a decoded topic name or a dataclass per record. Anything they do not recognise is left to decode_record.
_COMMIT_TIMESTAMP = struct.Struct(">q")


def commit_group(key: bytes | None) -> bytes | None:
    """The group id (its UTF-8 bytes, as the key holds them) of an offset commit key (record types 0 and 1), or
    None for any other record type or a key too short for the length it claims."""
    if key is None or len(key) < 4 or key[0] != 0 or key[1] > 1:
        return None
    end = 4 + (key[2] << 8 | key[3])  # a null or negative length reads as ≥ 32768: longer than any key here
    return key[4:end] if end <= len(key) else None


def commit_timestamp(value: bytes) -> int | None:
    """The commit timestamp of an OffsetCommitValue of versions 0-4, or None when the value is not one of those
    layouts (a newer version, a metadata length the layout cannot hold, truncation). Called for nearly every record
    of the topic: hence the few operations, and truncation caught as IndexError rather than tested for."""
    try:
        version = value[1]
        if value[0] or version > 4:
            return None
        if version == 4:  # compact metadata string: a one-byte varint of length + 1 when shorter than 127 bytes
            size = value[14]
            if not 0 < size < 0x80:
                return None
            at = 14 + size
        else:  # the version and offset, then from version 3 the leader epoch, then an int16-sized string
            at = 10 if version < 3 else 14
            if value[at] >= 0x80:
                return None
            at += 2 + (value[at] << 8 | value[at + 1])
    except IndexError:
        return None
    return _COMMIT_TIMESTAMP.unpack_from(value, at)[0] if at + 8 <= len(value) else None


# Share groups (KIP-932) keep their state in records shaped as the consumer group's: metadata (epoch), member
# metadata, target assignment epoch, target and current member assignments (Kafka 4.3.1's coordinator schemas).
SHARE_RECORD_TYPES = (10, 11, 12, 13, 14)


def _share_record(record_type: int, k: Reader, value: bytes | None):
    group = k.string()
    if record_type == 11:
        return GroupEpoch(group, None if value is None else _flexible_value(value).int32(), protocol="share")
    if record_type == 12:
        return TargetAssignmentEpoch(group, None if value is None else _flexible_value(value).int32(),
                                     protocol="share")
    member_id = k.string()
    if record_type == 10:
        if value is None:
            return MemberMetadata(group, member_id, tombstone=True)
        r = _flexible_value(value)
        r.string(compact=True, nullable=True)  # rack
        client_id, host = r.string(compact=True), r.string(compact=True)
        topics = tuple(r.string(compact=True) for _ in range(r.array_length(compact=True)))
        return MemberMetadata(group, member_id, None, client_id, host, topics)
    kind = "target" if record_type == 13 else "current"
    if value is None:
        return MemberPartitions(group, member_id, kind, tombstone=True)
    r = _flexible_value(value)
    if record_type == 13:
        return MemberPartitions(group, member_id, kind, _topic_partitions(r))
    epoch, previous, state = r.int32(), r.int32(), r.int8()
    return MemberPartitions(group, member_id, kind, _topic_partitions(r), epoch, previous, state)
