"""The message browser on a transactional partition (real broker): read_committed by default, with the offsets
taken by markers and aborted records shown as such; read_uncommitted marks aborted and still-open records."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topics.selectors import OffsetGap, offset_gaps, records_page


def test_gaps_are_the_missing_runs():
    assert offset_gaps(0, [0, 1, 5, 6, 9], 12, "read_committed") == [
        OffsetGap(2, 4, "read_committed"), OffsetGap(7, 8, "read_committed"), OffsetGap(10, 11, "read_committed")]
    assert offset_gaps(3, [], 3, "read_committed") == []


@given(st.integers(0, 50), st.sets(st.integers(0, 120)), st.integers(0, 130))
def test_gaps_and_records_cover_the_range_exactly_once(start, present, upto):
    offsets = sorted(o for o in present if start <= o < upto)
    gaps = offset_gaps(start, offsets, max(start, upto), "read_committed")
    covered = [o for g in gaps for o in range(g.first, g.last + 1)] + offsets
    assert sorted(covered) == list(range(start, max(start, upto)))


@pytest.fixture
def transactional_partition(kafka_node, topic_factory, local_cluster):
    """Offsets: 0-1 committed, 2 commit marker, 3-4 aborted, 5 abort marker, 6 plain, 7-8 open transaction."""
    from confluent_kafka import Producer

    topic = topic_factory("tx-browse", partitions=1)
    tx = Producer({"bootstrap.servers": kafka_node.bootstrap, "transactional.id": f"browse-{uuid.uuid4().hex}"})
    tx.init_transactions(15)
    for values, commit in (([b"c0", b"c1"], True), ([b"a0", b"a1"], False)):
        tx.begin_transaction()
        for value in values:
            tx.produce(topic, value=value, partition=0)
        tx.flush(15)
        tx.commit_transaction(15) if commit else tx.abort_transaction(15)
    plain = Producer({"bootstrap.servers": kafka_node.bootstrap})
    plain.produce(topic, value=b"p0", partition=0)
    plain.flush(15)
    tx.begin_transaction()
    for value in (b"o0", b"o1"):
        tx.produce(topic, value=value, partition=0)
    tx.flush(15)
    yield topic
    tx.abort_transaction(15)


def test_read_committed_by_default_with_markers_and_aborted_offsets_shown(transactional_partition):
    page = records_page("local", transactional_partition, 0, offset=0)
    assert page.isolation == "read_committed" and (page.last_stable, page.log_end, page.held_back) == (7, 9, 2)
    assert [r.value.text for r in page.records] == ["c0", "c1", "p0"]
    assert [(g.first, g.last) for g in page.gaps] == [(2, 5)]  # marker, two aborted records, marker


def test_read_uncommitted_marks_aborted_and_open_records(transactional_partition):
    page = records_page("local", transactional_partition, 0, offset=0, isolation="read_uncommitted")
    assert [(r.offset, r.value.text, r.transaction) for r in page.records] == [
        (0, "c0", ""), (1, "c1", ""), (3, "a0", "aborted"), (4, "a1", "aborted"), (6, "p0", ""),
        (7, "o0", "open"), (8, "o1", "open")]
    assert [(g.first, g.last) for g in page.gaps] == [(2, 2), (5, 5)]  # the two markers
