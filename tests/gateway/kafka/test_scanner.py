"""The scanner's newest-first merge of one window, pure: what it keeps of each partition is that partition's top,
so the cursor it leaves skips nothing, whatever the timestamps do."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gateway.kafka.records_io.scanner import newest_first_merge
from gateway.kafka.types import RecordInfo, ScanMatch


def _match(partition: int, offset: int, timestamp: int) -> ScanMatch:
    return ScanMatch(RecordInfo(topic="t", partition=partition, offset=offset, timestamp=timestamp,
                                timestamp_type="create-time", key=None, value=b""))


def _window(stamps: dict[int, list[int]]) -> dict[int, list[ScanMatch]]:
    """Each partition's matches in offset order, as a window reads them forwards."""
    return {p: [_match(p, offset, ts) for offset, ts in enumerate(times)] for p, times in stamps.items()}


def test_newest_first_by_timestamp_across_partitions():
    kept, dropped = newest_first_merge(_window({0: [10, 20, 30], 1: [15, 25, 35], 2: []}), 4)
    assert [(m.record.partition, m.record.offset) for m in kept] == [(1, 2), (0, 2), (1, 1), (0, 1)]
    assert dropped == {0, 1}


def test_everything_fits():
    kept, dropped = newest_first_merge(_window({0: [1, 2], 1: [3]}), 10)
    assert len(kept) == 3 and dropped == set()


def test_timestamps_that_go_backwards_still_keep_a_partitions_top():
    # Offset 2 of partition 0 is stamped before offset 1: it still comes first (the top of its partition).
    kept, _ = newest_first_merge(_window({0: [100, 300, 50], 1: [200]}), 2)
    assert [(m.record.partition, m.record.offset) for m in kept] == [(1, 0), (0, 2)]


@given(st.dictionaries(st.integers(0, 5), st.lists(st.integers(0, 1000), max_size=20), max_size=6),
       st.integers(0, 60))
def test_each_partition_gives_a_suffix_and_the_limit_holds(stamps, limit):
    kept, dropped = newest_first_merge(_window(stamps), limit)
    assert len(kept) == min(limit, sum(map(len, stamps.values())))
    for partition, times in stamps.items():
        own = sorted(m.record.offset for m in kept if m.record.partition == partition)
        assert own == list(range(len(times) - len(own), len(times)))  # the top offsets, none skipped
        assert (partition in dropped) == (len(own) < len(times))
