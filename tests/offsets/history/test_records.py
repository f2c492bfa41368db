"""Decoder unit tests: records built here from the Kafka 4.3.1 schemas, for every version the decoder reads."""

import struct
import uuid

import pytest

from offsets.history.records import (
    ClassicGroup,
    GroupEpoch,
    MemberMetadata,
    MemberPartitions,
    OffsetCommit,
    RecordDecodeError,
    Skipped,
    TargetAssignmentEpoch,
    commit_group,
    commit_timestamp,
    decode_assignment,
    decode_record,
)


class W:
    """A minimal writer of Kafka's encoding, for test vectors."""

    def __init__(self):
        self.b = bytearray()

    def i8(self, v): self.b += struct.pack(">b", v); return self
    def i16(self, v): self.b += struct.pack(">h", v); return self
    def i32(self, v): self.b += struct.pack(">i", v); return self
    def i64(self, v): self.b += struct.pack(">q", v); return self

    def uv(self, v):
        while True:
            byte = v & 0x7F
            v >>= 7
            self.b.append(byte | (0x80 if v else 0))
            if not v:
                return self

    def s(self, v, compact=False):
        if v is None:
            return self.uv(0) if compact else self.i16(-1)
        data = v.encode()
        (self.uv(len(data) + 1) if compact else self.i16(len(data)))
        self.b += data
        return self

    def by(self, v, compact=False):
        if v is None:
            return self.uv(0) if compact else self.i32(-1)
        (self.uv(len(v) + 1) if compact else self.i32(len(v)))
        self.b += v
        return self

    def arr(self, n, compact=False): return self.uv(n + 1) if compact else self.i32(n)
    def uid(self, v): self.b += uuid.UUID(v).bytes; return self
    def no_tags(self): return self.uv(0)

    def tags(self, *fields):
        self.uv(len(fields))
        for tag, data in fields:
            self.uv(tag).uv(len(data))
            self.b += data
        return self

    def done(self): return bytes(self.b)


def assignment(pairs, version=1):
    w = W().i16(version)
    topics = {}
    for t, p in pairs:
        topics.setdefault(t, []).append(p)
    w.arr(len(topics))
    for t, parts in topics.items():
        w.s(t).arr(len(parts))
        for p in parts:
            w.i32(p)
    return w.by(b"userdata").done()


def offset_key(t=1):
    return W().i16(t).s("g1").s("orders").i32(3).done()


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_offset_commit_values_of_every_version(version):
    w = W().i16(version).i64(42)
    if version >= 3:
        w.i32(7)
    w.s("meta", compact=version >= 4).i64(1_700_000_000_000)
    if version == 1:
        w.i64(-1)
    if version >= 4:
        w.tags((0, uuid.uuid4().bytes))

    assert decode_record(offset_key(), w.done()) == OffsetCommit("g1", "orders", 3, 42, 1_700_000_000_000)


def commit_value(version, metadata="meta", timestamp=1_700_000_000_000):
    w = W().i16(version).i64(42)
    if version >= 3:
        w.i32(7)
    w.s(metadata, compact=version >= 4).i64(timestamp)
    if version == 1:
        w.i64(-1)
    if version >= 4:
        w.tags((0, uuid.uuid4().bytes))
    return w.done()


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("metadata", ["", "meta", "m" * 126, "é" * 300])
def test_the_commit_shortcut_reads_what_the_full_decoder_reads(version, metadata):
    key, value = W().i16(1).s("grüppe-1").s("orders").i32(3).done(), commit_value(version, metadata, 1_234_567)
    full = decode_record(key, value)

    assert commit_group(key) == full.group.encode() == "grüppe-1".encode()
    # A compact metadata string of 127 bytes or more has a two-byte length: left to the full decoder.
    long_compact = version >= 4 and len(metadata.encode()) >= 127
    assert full.commit_timestamp == 1_234_567
    assert commit_timestamp(value) == (None if long_compact else 1_234_567)


def test_the_commit_shortcut_leaves_other_records_and_damage_to_the_full_decoder():
    assert commit_group(offset_key(0)) == commit_group(offset_key(1)) == b"g1"
    for other in (2, 3, 5, 6, 7, 8, 10, 16, 256):
        assert commit_group(key(other, "g1", "m")) is None
    assert commit_group(None) is None and commit_group(b"\x00") is None
    assert commit_group(W().i16(1).i16(40).done() + b"short") is None  # claims more than it holds
    assert commit_group(W().i16(1).i16(-1).done()) is None  # a null group id

    assert commit_timestamp(commit_value(5)) is None  # a version newer than this decoder
    assert commit_timestamp(commit_value(3)[:-1]) is None  # truncated inside the timestamp
    assert commit_timestamp(W().i16(3).i64(1).i32(0).i16(-1).i64(5).done()) is None  # a null metadata string
    assert commit_timestamp(W().i16(4).i64(1).i32(0).uv(0).i64(5).done()) is None  # a null compact string
    assert commit_timestamp(b"") is None


def test_offset_tombstone_and_legacy_key():
    assert decode_record(offset_key(0), None) == OffsetCommit("g1", "orders", 3, None)


def group_value(version, members):
    flexible = version >= 4
    w = W().i16(version).s("consumer", flexible).i32(5).s("range", flexible).s("m-1", flexible)
    if version >= 2:
        w.i64(1_700_000_000_123)
    w.arr(len(members), flexible)
    for member_id, instance, client, host, pairs in members:
        w.s(member_id, flexible)
        if version >= 3:
            w.s(instance, flexible)
        w.s(client, flexible).s(host, flexible)
        if version >= 1:
            w.i32(60000)
        w.i32(45000).by(b"subscription", flexible).by(assignment(pairs), flexible)
        if flexible:
            w.no_tags()
    if flexible:
        w.no_tags()
    return w.done()


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_classic_group_metadata_of_every_version_with_assignments(version):
    members = [("m-1", "inst-1", "app-a", "/10.0.0.1", [("orders", 0), ("orders", 1)]),
               ("m-2", None, "app-b", "/10.0.0.2", [("orders", 2), ("audit", 0)])]

    group = decode_record(W().i16(2).s("g1").done(), group_value(version, members))

    assert (group.group, group.generation, group.protocol, group.leader) == ("g1", 5, "range", "m-1")
    assert group.state_timestamp == (1_700_000_000_123 if version >= 2 else None)
    first, second = group.members
    assert (first.member_id, first.client_id, first.host) == ("m-1", "app-a", "/10.0.0.1")
    assert first.instance_id == ("inst-1" if version >= 3 else None)
    assert first.assignment == (("orders", 0), ("orders", 1))
    assert second.assignment == (("audit", 0), ("orders", 2))


def test_empty_generation_and_group_tombstone():
    assert decode_record(W().i16(2).s("g1").done(), group_value(3, [])).members == ()
    assert decode_record(W().i16(2).s("g1").done(), None) == ClassicGroup("g1", tombstone=True)


def key(t, *strings):
    w = W().i16(t)
    for s in strings:
        w.s(s)
    return w.done()


def test_consumer_group_epoch_and_target_assignment_epoch_with_tagged_fields():
    epoch_value = W().i16(0).i32(9).tags((0, struct.pack(">q", 123))).done()
    assert decode_record(key(3, "cg"), epoch_value) == GroupEpoch("cg", 9)
    assert decode_record(key(3, "cg"), None) == GroupEpoch("cg", None)
    assert decode_record(key(6, "cg"), W().i16(0).i32(9).tags((0, struct.pack(">q", 5))).done()) == \
        TargetAssignmentEpoch("cg", 9)


def test_member_metadata_consumer_and_classic_members():
    value = (W().i16(0).s("static-1", True).s(None, True).s("app", True).s("/10.1.1.1", True).arr(2, True)
             .s("orders", True).s("audit", True).s(None, True).i32(300000).s("uniform", True).no_tags().done())
    member = decode_record(key(5, "cg", "mem-1"), value)
    assert member == MemberMetadata("cg", "mem-1", "static-1", "app", "/10.1.1.1", ("orders", "audit"), False)
    classic_value = value[:-1] + W().tags((0, b"\x00\x00\x75\x30\x01")).done()
    assert decode_record(key(5, "cg", "mem-1"), classic_value).classic is True
    assert decode_record(key(5, "cg", "mem-1"), None).tombstone


def topic_partitions(w, entries, tagged=False):
    w.arr(len(entries), True)
    for topic_id, parts in entries:
        w.uid(topic_id).arr(len(parts), True)
        for p in parts:
            w.i32(p)
        w.tags((0, b"\x02\x00\x00\x00\x05")) if tagged else w.no_tags()
    return w


def test_target_and_current_member_assignments_by_topic_id():
    t1, t2 = str(uuid.uuid4()), str(uuid.uuid4())
    target = topic_partitions(W().i16(0), [(t1, [0, 1]), (t2, [4])]).no_tags().done()
    assert decode_record(key(7, "cg", "m"), target) == MemberPartitions(
        "cg", "m", "target", tuple(sorted([(t1, 0), (t1, 1), (t2, 4)])))

    current = topic_partitions(topic_partitions(W().i16(0).i32(12).i32(11).i8(0), [(t1, [0])], tagged=True),
                               [(t2, [4])]).no_tags().done()
    decoded = decode_record(key(8, "cg", "m"), current)
    assert (decoded.member_epoch, decoded.previous_member_epoch, decoded.state) == (12, 11, 0)
    assert decoded.partitions == ((t1, 0),) and decoded.pending_revocation == ((t2, 4),)
    assert decode_record(key(8, "cg", "m"), None).tombstone


def test_other_record_types_are_skipped_and_damage_is_reported():
    assert decode_record(key(16, "cg", "regex"), b"\x00\x00") == Skipped(16)
    with pytest.raises(RecordDecodeError, match="truncated"):
        decode_record(offset_key(), W().i16(3).i64(1).done())
    with pytest.raises(RecordDecodeError, match="newer than this decoder"):
        decode_record(offset_key(), W().i16(9).done())


def test_assignment_bytes_of_every_consumer_protocol_version():
    for version in range(4):
        assert decode_assignment(assignment([("t", 1), ("t", 0)], version)) == (("t", 0), ("t", 1))
    assert decode_assignment(None) == ()


def test_share_group_records_decode_as_the_consumer_group_shapes():
    t1 = str(uuid.uuid4())
    assert decode_record(key(11, "sg"), W().i16(0).i32(4).i64(77).no_tags().done()) == GroupEpoch("sg", 4, "share")
    assert decode_record(key(11, "sg"), None) == GroupEpoch("sg", None, "share")
    assert decode_record(key(12, "sg"), W().i16(0).i32(4).tags((0, struct.pack(">q", 9))).done()) == \
        TargetAssignmentEpoch("sg", 4, "share")
    member = W().i16(0).s(None, True).s("share-app", True).s("/10.0.0.9", True).arr(1, True).s("orders", True)
    assert decode_record(key(10, "sg", "m1"), member.no_tags().done()) == MemberMetadata(
        "sg", "m1", None, "share-app", "/10.0.0.9", ("orders",))
    target = topic_partitions(W().i16(0), [(t1, [0, 2])]).no_tags().done()
    assert decode_record(key(13, "sg", "m1"), target) == MemberPartitions("sg", "m1", "target", ((t1, 0), (t1, 2)))
    current = decode_record(key(14, "sg", "m1"), topic_partitions(W().i16(0).i32(5).i32(4).i8(0),
                                                                   [(t1, [2])]).no_tags().done())
    assert (current.kind, current.member_epoch, current.partitions) == ("current", 5, ((t1, 2),))
    assert decode_record(key(14, "sg", "m1"), None).tombstone


def test_share_group_generations_are_labelled_share_in_the_timeline():
    from offsets.history.timeline import apply_record

    t1, states = str(uuid.uuid4()), {}
    for record in (GroupEpoch("sg", 1, "share"), MemberMetadata("sg", "m1", None, "app", "/h", ("orders",)),
                   MemberPartitions("sg", "m1", "target", ((t1, 0),))):
        assert apply_record(record, states, lambda topic_id: "orders", 1000) == []
    [snapshot] = apply_record(TargetAssignmentEpoch("sg", 1, "share"), states, lambda topic_id: "orders", 1000)
    assert (snapshot.protocol, snapshot.generation, snapshot.members[0]["assignment"]) == ("share", 1, [["orders", 0]])
