"""A groups list that lost groups which still exist is not published (offsets/group_listing.py): a broker in its
controlled shutdown answers ListGroups with an empty list and no error for a moment (seen on Kafka 4.3.1: SIGTERM a
broker while listing, and the answers are empty until the connection drops), which would read as every group
deleted. Missing classic and consumer groups are described: Dead ones were deleted, any other keeps the old list."""

from __future__ import annotations

import uuid

import pytest

from gateway.kafka.errors import ClusterUnavailable
from gateway.kafka.types import GroupDescription, GroupListing
from offsets.group_listing import CONFIRM_MISSING_AT_MOST, confirm_missing_gone


class _Described:
    """A gateway whose DescribeGroups answers from `states` (group id -> state) and records what it was asked."""

    cluster = "scripted"

    def __init__(self, states: dict[str, str]) -> None:
        self.states, self.asked = states, []

    def describe_groups(self, group_ids: list[str]) -> dict[str, GroupDescription]:
        self.asked.append(list(group_ids))
        return {g: GroupDescription(g, self.states.get(g, "Dead"), "", "", None, ()) for g in group_ids}


def _listed(*ids: str) -> list[GroupListing]:
    return [GroupListing(group_id=g, state="Stable", protocol="consumer") for g in ids]


def test_a_group_missing_from_the_list_but_still_there_keeps_the_old_list():
    admin = _Described({"billing": "Stable"})
    with pytest.raises(ClusterUnavailable, match="left out 1 group.*'billing'.*The last list is kept"):
        confirm_missing_gone(admin, _listed("orders"), {"orders": "consumer", "billing": "classic"})
    assert admin.asked == [["billing"]]


def test_groups_deleted_since_are_confirmed_and_nothing_is_asked_when_none_is_missing():
    admin = _Described({})
    confirm_missing_gone(admin, _listed(), {"gone-1": "classic", "gone-2": "consumer"})
    confirm_missing_gone(admin, _listed("a"), {"a": "classic"})
    assert admin.asked == [["gone-1", "gone-2"]]


def test_share_and_streams_groups_are_not_asked_and_the_asking_is_bounded():
    admin = _Described({})
    known = {f"g{n:05}": "classic" for n in range(CONFIRM_MISSING_AT_MOST + 50)}
    confirm_missing_gone(admin, _listed(), {**known, "shared": "share", "app": "streams"})
    assert len(admin.asked) == 1 and len(admin.asked[0]) == CONFIRM_MISSING_AT_MOST
    assert "shared" not in admin.asked[0] and "app" not in admin.asked[0]


@pytest.mark.kafka
@pytest.mark.django_db
def test_on_the_broker_an_empty_answer_is_refused_while_the_group_lives_and_taken_once_it_is_deleted(
        local_cluster, kafka_node, topic_factory, commit):
    from console.clusters.selectors import cluster_admin

    topic = topic_factory("listing", partitions=1)
    group = f"listing-{uuid.uuid4().hex[:8]}"
    commit(group, {(topic, 0): 1})
    admin = cluster_admin("local")
    with pytest.raises(ClusterUnavailable, match=group):
        confirm_missing_gone(admin, [], {group: "classic"})  # what a broker shutting down answers
    admin.delete_groups([group])
    confirm_missing_gone(admin, [], {group: "classic"})
