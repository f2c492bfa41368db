"""Pure: bulk topic planning and the shared confirmation, with topic names up to 249 characters."""

from __future__ import annotations

import pytest
from django.test import override_settings
from hypothesis import given, settings
from hypothesis import strategies as st

from console.bulk import check_confirmation, chosen_names
from console.errors import ConsoleError
from gateway.kafka.types import ConfigEntryInfo, PartitionMetadata, TopicMetadata
from topics.bulk.planning import MSG_INTERNAL, MSG_MISSING, MSG_NO_CHANGE, MSG_WITNESS, plan_configs, plan_delete, \
    plan_partitions

names = st.lists(st.text(alphabet="abcXYZ019._-", min_size=1, max_size=249), min_size=1, max_size=6, unique=True)


def _meta(name: str, partitions: int = 1, internal: bool = False) -> TopicMetadata:
    return TopicMetadata(name, tuple(PartitionMetadata(p, 1, (1,), (1,)) for p in range(partitions)),
                         internal=internal)


@settings(max_examples=40, deadline=None)
@given(names)
def test_delete_plans_every_topic_by_name(chosen):
    described = {n: _meta(n) for n in chosen[1:]}
    plan = plan_delete(chosen, described)
    assert [c.topic for c in plan.changes] == chosen
    assert plan.changes[0].refused == MSG_MISSING
    assert plan.phrase == f"delete {len(chosen) - 1} topic" + ("" if len(chosen) == 2 else "s")


def test_internal_witness_and_unchanged_topics_are_left_alone():
    described = {"__consumer_offsets": _meta("__consumer_offsets", internal=True), "w": _meta("w"),
                 "a": _meta("a", 3), "b": _meta("b", 1)}
    assert [c.refused for c in plan_delete(["__consumer_offsets", "w", "a"], described, witness="w").changes] == [
        MSG_INTERNAL, MSG_WITNESS, ""]
    grow = plan_partitions(["a", "b"], described, 2, violations={"b": ["Policy 'p': no"]}, refusals={},
                           override=False)
    assert [c.refused for c in grow.changes] == ["already has 3 partitions (Kafka cannot shrink a topic)",
                                                 "Policy 'p': no"]
    assert plan_partitions(["b"], described, 2, violations={"b": ["x"]}, refusals={}, override=True).to_change
    entry = ConfigEntryInfo(name="retention.ms", value="1000", source="topic", is_default=False, read_only=False,
                            sensitive=False, synonyms=())
    configs = plan_configs(["a", "b"], described, {"a": {"retention.ms": entry}, "b": {}},
                           set_values={"retention.ms": "1000"}, delete=[], violations={}, refusals={}, override=False)
    assert [c.refused for c in configs.changes] == [MSG_NO_CHANGE, ""]
    assert configs.changes[1].summary == "retention.ms: (broker default) → 1000 (topic)"


def test_selection_limits_and_typed_confirmation():
    assert chosen_names(["a", "b", "a"], noun="topic") == ["a", "b"]
    with pytest.raises(ConsoleError, match="matches no topic"):
        chosen_names([], noun="topic")
    with override_settings(BULK_MAX_OBJECTS=2), pytest.raises(ConsoleError, match="at most 2 objects"):
        chosen_names(["a", "b", "c"], noun="topic")
    check_confirmation(" delete 2 topics ", "delete 2 topics")
    with pytest.raises(ConsoleError, match="Type 'delete 2 topics' exactly"):
        check_confirmation("delete 3 topics", "delete 2 topics")
