"""Replica placement plans, checked as the controller would check them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.errors import ConsoleError
from gateway.kafka.types import PartitionMetadata
from replication.planning import (Move, checked_moves, not_preferred, parse_assignment, parse_scope,
                                  replication_factor_targets,
                                  throttled_replicas)


def test_assignment_text_reads_partitions_and_ordered_brokers():
    assert parse_assignment(" 0=1,2,3; 1=3,1 ;\n2=2") == {0: (1, 2, 3), 1: (3, 1), 2: (2,)}
    for bad in ("0:1,2", "x=1", "0=1,b"):
        with pytest.raises(ConsoleError, match="PARTITION=BROKER"):
            parse_assignment(bad)


def test_moves_are_checked_before_kafka_sees_them():
    current = {0: (1, 2), 1: (2, 3)}
    assert checked_moves("t", current, {0: (2, 3), 1: (2, 3)}, {1, 2, 3}) == [Move(0, (1, 2), (2, 3))]
    for targets, message in (({5: (1,)}, "no partition 5"), ({0: (1, 4)}, "Broker 4 is not one"),
                             ({0: (1, 1)}, "lists broker 1 twice"), ({0: ()}, "at least one replica"),
                             ({0: (1, 2)}, "nothing to move")):
        with pytest.raises(ConsoleError, match=message):
            checked_moves("t", current, targets, {1, 2, 3})


def test_a_move_names_what_joins_leaves_and_whether_the_leader_changes():
    move = Move(0, (1, 2), (2, 3))
    assert (move.adding, move.removing, move.leader_changes) == ((3,), (1,), True)
    assert throttled_replicas([move, Move(1, (3,), (3, 1))]) == ("0:1,0:2,1:3", "0:3,1:1")


def test_a_new_replication_factor_keeps_existing_replicas_and_spreads_the_rest():
    targets = replication_factor_targets({0: (1,), 1: (1,), 2: (2,)}, 3, {1, 2, 3})
    assert targets == {0: (1, 3, 2), 1: (1, 3, 2), 2: (2, 1, 3)}  # the least-loaded broker first, ties by id
    assert replication_factor_targets({0: (3, 1, 2)}, 1, {1, 2, 3}) == {0: (3,)}
    with pytest.raises(ConsoleError, match="between 1 and the 3 live brokers"):
        replication_factor_targets({0: (1,)}, 4, {1, 2, 3})


@given(st.dictionaries(st.integers(0, 20), st.lists(st.integers(1, 5), min_size=1, max_size=5, unique=True),
                       min_size=1), st.integers(1, 5))
def test_any_new_factor_gives_distinct_live_replicas_and_keeps_the_leader_when_it_can(current, factor):
    brokers = {1, 2, 3, 4, 5}
    targets = replication_factor_targets({p: tuple(r) for p, r in current.items()}, factor, brokers)
    for partition, replicas in targets.items():
        assert len(replicas) == factor == len(set(replicas)) and set(replicas) <= brokers
        assert replicas[0] == current[partition][0]


def test_only_in_sync_preferred_replicas_count_as_electable():
    partitions = [PartitionMetadata(0, 2, (1, 2), (1, 2)), PartitionMetadata(1, 2, (1, 2), (2,)),
                  PartitionMetadata(2, 1, (1, 2), (1, 2))]
    assert [p.partition for p in not_preferred(partitions)] == [0]


def test_an_election_scope_names_topics_or_chosen_partitions():
    assert parse_scope(None) is None and parse_scope([]) is None
    assert parse_scope(["orders:0,2", "payments", "orders:5"]) == {"orders": {0, 2, 5}, "payments": None}
    assert parse_scope(["orders", "orders:1"]) == {"orders": None}  # the whole topic already
    for bad in (":1", "orders:", "orders:x"):
        with pytest.raises(ConsoleError, match="TOPIC:0,2"):
            parse_scope([bad])
