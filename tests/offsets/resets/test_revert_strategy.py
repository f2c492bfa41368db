"""Which reset a revert goes back to, per kind of group, from the audit log alone (no broker)."""

from __future__ import annotations

import pytest

from console.audit.actor import Actor
from console.audit.services import audit_record
from console.errors import ConsoleError, NotFound
from gateway.kafka.types import PartitionRef
from offsets.kinds import CONSUMER, SHARE, STREAMS
from offsets.resets.planning import TopicScope
from offsets.resets.services import revert_strategy

pytestmark = pytest.mark.django_db

BEFORE = {"orders": {"0": 5, "1": None}, "audit": {"2": 7}}


@pytest.fixture
def reset_of(operator):
    def record(kind, before=BEFORE) -> int:
        return audit_record(actor=Actor(user=operator, source="cli"), action=kind.reset_action, outcome="success",
                            cluster="local", target="group:g", before=before).seq

    return record


@pytest.mark.parametrize("kind", [CONSUMER, STREAMS], ids=["consumer", "streams"])
def test_a_partition_without_a_position_before_is_deleted_again(reset_of, kind):
    event, strategy, scope = revert_strategy(reset_of(kind), kind)
    assert strategy.offsets == {PartitionRef("orders", 0): 5, PartitionRef("orders", 1): None,
                                PartitionRef("audit", 2): 7}
    assert scope == [TopicScope("audit", (2,)), TopicScope("orders", (0, 1))] and event.target == "group:g"


def test_a_share_group_keeps_the_start_offsets_it_cannot_delete_one_by_one(reset_of):
    _, strategy, scope = revert_strategy(reset_of(SHARE), SHARE)
    assert strategy.offsets == {PartitionRef("orders", 0): 5, PartitionRef("audit", 2): 7}
    assert scope == [TopicScope("audit", (2,)), TopicScope("orders", (0,))]


def test_without_a_kind_the_event_says_whose_reset_it_was(reset_of):
    _, strategy, _ = revert_strategy(reset_of(SHARE))
    assert PartitionRef("orders", 1) not in strategy.offsets


def test_a_reset_of_another_kind_or_nothing_to_go_back_to_is_refused(reset_of):
    share_reset = reset_of(SHARE)
    with pytest.raises(ConsoleError, match="not an offset reset"):
        revert_strategy(share_reset, CONSUMER)
    with pytest.raises(ConsoleError, match="not a streams-group reset"):
        revert_strategy(share_reset, STREAMS)
    with pytest.raises(ConsoleError, match="no start offsets before"):
        revert_strategy(reset_of(SHARE, before={"orders": {"0": None}}), SHARE)
    with pytest.raises(NotFound):
        revert_strategy(share_reset + 100, CONSUMER)
