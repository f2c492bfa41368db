"""find-hanging's decision, apart from Kafka: which open transactions are candidates, and which of those hang."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gateway.kafka.types import PartitionRef, ProducerState, TransactionInfo
from transactions.selectors import OpenTransaction, hanging_among, open_transactions

A, B = PartitionRef("orders", 0), PartitionRef("orders", 1)


def producer(pid: int, *, last: int, start: int | None) -> ProducerState:
    return ProducerState(producer_id=pid, producer_epoch=0, coordinator_epoch=-1, last_sequence=9,
                         last_timestamp=last, transaction_start_offset=start)


def info(tid: str, pid: int, partitions) -> TransactionInfo:
    return TransactionInfo(transactional_id=tid, coordinator=1, producer_id=pid, producer_epoch=0, state="Ongoing",
                           timeout_ms=60_000, start_time_ms=0, partitions=tuple(partitions))


def test_only_open_transactions_older_than_the_timeout_are_candidates():
    producers = {A: (producer(1, last=0, start=5), producer(2, last=0, start=None), producer(3, last=950, start=7))}
    assert open_transactions(producers, max_timeout_ms=100, at_ms=1000) == [OpenTransaction(A, producers[A][0])]
    # The tool's comparison is strict: exactly the timeout is not yet a candidate.
    assert open_transactions({A: (producer(1, last=900, start=5),)}, max_timeout_ms=100, at_ms=1000) == []


def test_a_transaction_hangs_when_its_coordinator_will_not_write_the_marker():
    lost = OpenTransaction(A, producer(1, last=0, start=5))         # no transactional id maps to producer 1
    forgotten = OpenTransaction(A, producer(2, last=0, start=6))    # id known to the list, not to describe
    elsewhere = OpenTransaction(B, producer(3, last=0, start=7))    # its transaction no longer includes B
    alive = OpenTransaction(A, producer(3, last=0, start=8))        # the coordinator still lists A
    ids = {2: "gone", 3: "live"}
    descriptions = {"gone": None, "live": info("live", 3, [A])}
    assert hanging_among([lost, forgotten, elsewhere, alive], ids, descriptions) == [lost, forgotten, elsewhere]


@given(st.lists(st.tuples(st.integers(0, 5), st.booleans(), st.booleans()), max_size=12))
def test_hanging_is_exactly_the_candidates_the_coordinators_do_not_cover(rows):
    candidates = [OpenTransaction(PartitionRef("t", i), producer(pid, last=0, start=i))
                  for i, (pid, _, _) in enumerate(rows)]
    ids = {pid: f"id-{pid}" for pid, known, _ in rows if known}
    covered = {PartitionRef("t", i) for i, (_, _, cover) in enumerate(rows) if cover}
    descriptions = {f"id-{pid}": info(f"id-{pid}", pid, covered) for pid in ids}
    hanging = hanging_among(candidates, ids, descriptions)
    assert hanging == [c for c in candidates
                       if c.producer.producer_id not in ids or c.ref not in covered]
