"""Group types as the sweeps see them: the pure difference, and what is stored of it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.kafka.types import GroupListing
from offsets.models import GROUP_ID_MAX_STORED, GroupTypeChange, GroupTypeSeen, LagSweep
from offsets.protocols.observed import group_types_observe, type_diff


def listing(group: str, kind: str, simple: bool = False) -> GroupListing:
    return GroupListing(group_id=group, state="Stable", protocol=kind, simple=simple, group_type=kind)


def test_the_difference_names_new_changed_gone_and_leaves_untyped_groups_alone():
    known = {"a": ("classic", False), "b": ("classic", False), "c": ("share", False), "d": ("classic", True)}
    diff = type_diff(known, [listing("a", "classic"), listing("b", "consumer"), listing("d", "classic"),
                             listing("e", "streams"), GroupListing("f", "Stable", "classic")])
    assert diff.new == {"e": ("streams", False)}
    assert diff.changed == {"b": ("classic", "consumer", False)}
    assert diff.gone == ["c"]
    assert diff.simple_now == {"d": False}


@given(st.dictionaries(st.text(min_size=1, max_size=20), st.sampled_from(["classic", "consumer", "share"])),
       st.dictionaries(st.text(min_size=1, max_size=20), st.sampled_from(["classic", "consumer", "share"])))
def test_the_difference_accounts_for_every_group(before, after):
    diff = type_diff({g: (k, False) for g, k in before.items()}, [listing(g, k) for g, k in after.items()])
    assert set(diff.new) == set(after) - set(before)
    assert set(diff.gone) == set(before) - set(after)
    assert set(diff.changed) == {g for g in set(before) & set(after) if before[g] != after[g]}


@pytest.mark.django_db
def test_a_change_is_stored_with_the_window_it_happened_in():
    first, second = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 0, 1, tzinfo=UTC)
    long_id = "x" * (GROUP_ID_MAX_STORED + 1)
    group_types_observe(cluster="c1", listings=[listing("g/1 #%", "classic"), listing(long_id, "classic")], at=first)
    assert list(GroupTypeSeen.objects.values_list("group", "group_type", "since")) == [("g/1 #%", "classic", first)]
    assert not GroupTypeChange.objects.exists()
    group_types_observe(cluster="c1", listings=[listing("g/1 #%", "consumer")], at=second)
    change = GroupTypeChange.objects.get()
    assert (change.group, change.before, change.after, change.previous_sweep_at, change.at) == (
        "g/1 #%", "classic", "consumer", first, second)
    assert GroupTypeSeen.objects.get(group="g/1 #%").since == second
    assert LagSweep.objects.get(cluster="c1").types_seen_at == second
    group_types_observe(cluster="c1", listings=[], at=second + timedelta(minutes=1))
    assert not GroupTypeSeen.objects.exists() and GroupTypeChange.objects.count() == 1
