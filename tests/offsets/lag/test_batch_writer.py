"""Where a sweep's batches are written (offsets/lag/batch_writer.py): by a writer thread on PostgreSQL outside a
transaction, in place on SQLite or inside a caller's transaction, with the same rows either way. Storing only:
Kafka's answers are made up here (what a sweep does with Kafka is tested in test_sampler.py)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from gateway.kafka.types import GroupListing, PartitionRef
from offsets.lag import batch_writer
from offsets.lag.batch_writer import BatchWriter
from offsets.lag.observe import Asked
from offsets.lag.sampler import _store_batch
from offsets.models import GroupLagStatus, LagSample

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _store_sweeps(cluster: str, groups: int, sweeps: int, writer_for) -> None:
    """`sweeps` sweeps of `groups` groups on 2 partitions each, in batches of 3 groups, the lag growing by one a
    sweep."""
    listings = [GroupListing(f"writer-group-{g}", "Empty", "consumer", group_type="classic") for g in range(groups)]
    for sweep in range(sweeps):
        refs = [PartitionRef("writer-topic", p) for p in range(2)]
        answer = Asked(groups=[g.group_id for g in listings],
                       committed={g.group_id: {ref: 10 * i for ref in refs} for i, g in enumerate(listings)},
                       ends={ref: 1000 + sweep for ref in refs}, stables={})
        writer = writer_for()
        for start in range(0, groups, 3):
            _store_batch(cluster, T0 + timedelta(seconds=30 * sweep), listings[start:start + 3], answer, {}, 5,
                         writer)
        writer.close()


def _stored(cluster: str) -> tuple[list, list]:
    samples = list(LagSample.objects.filter(cluster=cluster).order_by("group", "time")
                   .values_list("group", "topic", "time", "lag", "committed", "end", "partitions"))
    statuses = list(GroupLagStatus.objects.filter(cluster=cluster).order_by("group")
                    .values_list("group", "status", "reason", "window", "partition_status", "totals", "sampled_at"))
    return samples, [(*s[:3], bytes(s[3]), *s[4:]) for s in statuses]


@pytest.mark.django_db(transaction=True)
def test_the_writer_thread_stores_what_writing_in_place_stores():
    _store_sweeps("in-place", 10, 4, lambda: _InPlace())
    _store_sweeps("overlapped", 10, 4, BatchWriter)
    in_place, overlapped = _stored("in-place"), _stored("overlapped")
    assert len(in_place[0]) == 40 and len(in_place[1]) == 10
    assert [s[1:] for s in overlapped[0]] == [s[1:] for s in in_place[0]]
    assert [s[1:] for s in overlapped[1]] == [s[1:] for s in in_place[1]]
    assert not [t for t in threading.enumerate() if t.name.startswith("lag-writer")]  # closed with its writer


class _InPlace(BatchWriter):
    def __init__(self) -> None:
        super().__init__()
        self.close()  # no thread: every write runs in the caller's


@pytest.mark.django_db(transaction=True)
def test_writes_run_in_a_thread_of_their_own_on_postgresql_only():
    seen = []
    writer = BatchWriter()
    writer.write(lambda: seen.append(threading.current_thread().name))
    writer.close()
    overlapped = connection.vendor == "postgresql"
    assert seen[0].startswith("lag-writer") if overlapped else seen == [threading.current_thread().name]


@pytest.mark.django_db
def test_inside_a_transaction_writes_run_in_place():
    """Another connection would neither see the caller's uncommitted rows nor be rolled back with them."""
    seen = []
    with transaction.atomic():
        writer = BatchWriter()
        writer.write(lambda: seen.append(threading.current_thread().name))
        writer.close()
    assert seen == [threading.current_thread().name]


@pytest.mark.django_db(transaction=True)
def test_a_failed_write_is_raised_and_the_writer_still_closes(monkeypatch):
    monkeypatch.setattr(batch_writer, "WRITES_AHEAD", 1)
    writer = BatchWriter()

    def failing():
        raise RuntimeError("the database refused")

    with pytest.raises(RuntimeError, match="the database refused"):
        writer.write(failing)
        writer.write(lambda: None)  # on PostgreSQL the failure comes back here, at the latest at close()
        writer.close()
    writer.close()  # closing again does nothing
    assert not [t for t in threading.enumerate() if t.name.startswith("lag-writer")]
