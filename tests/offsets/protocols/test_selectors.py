"""What the page reads besides the groups: the brokers' policy (real broker) and the moves with their rebalances
(stored rows)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from offsets.models import GroupGeneration, GroupTypeChange
from offsets.protocols.selectors import group_moves, migration_policy

pytestmark = [pytest.mark.django_db]

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@pytest.mark.kafka
def test_the_policy_is_the_brokers_own_default(local_cluster):
    assert migration_policy("local") == ("bidirectional", "")


def _generation(protocol: str, n: int, at: datetime, settled_after_s: float | None = None) -> None:
    settled = None if settled_after_s is None else at + timedelta(seconds=settled_after_s)
    GroupGeneration.objects.create(cluster="c1", group="g", protocol=protocol, generation=n, time=at,
                                   settled_at=settled)


def test_a_move_counts_the_rebalances_of_the_week_before_and_since():
    for n, minutes in enumerate((-8 * 24 * 60, -50, -40, -20)):  # the first is more than a week before
        _generation("classic", n + 1, T0 + timedelta(minutes=minutes))
    for n, (minutes, took) in enumerate(((2, 4.5), (30, 1.5), (40, None))):  # the last not seen settling
        _generation("consumer", n + 10, T0 + timedelta(minutes=minutes), took)
    GroupTypeChange.objects.create(cluster="c1", group="g", before="classic", after="consumer",
                                   at=T0 + timedelta(minutes=5), previous_sweep_at=T0 - timedelta(minutes=1))
    GroupTypeChange.objects.create(cluster="c1", group="h", before="consumer", after="classic", at=T0)
    [move] = group_moves("c1", now=T0 + timedelta(minutes=62))
    assert move.group == "g" and move.recorded_at == T0 + timedelta(minutes=2)
    # the week before the first consumer epoch: three classic generations; the hour since: three epochs
    assert (move.before_stats.count, move.after_stats.count) == (3, 3)
    assert move.before_stats.mean_gap_s == 15 * 60 and move.after_stats.mean_gap_s == 19 * 60
    # how long the epochs took to settle; classic generations have no duration (Kafka records no start)
    assert (move.after_stats.settled, move.after_stats.mean_settle_s, move.after_stats.max_settle_s) == (2, 3.0, 4.5)
    assert (move.before_stats.settled, move.before_stats.mean_settle_s) == (0, None)
    assert (move.before_stats.window_words, move.after_stats.window_words) == ("7 days", "60 min")


@pytest.mark.kafka
def test_a_group_gone_since_the_listing_is_dead_and_the_others_still_described(local_cluster, commit, topic_factory):
    from console.clusters.selectors import cluster_admin

    topic = topic_factory("gone")
    commit("still-here-g", {(topic, 0): 0})
    described = cluster_admin("local").describe_group_protocols(["never-was-a", "still-here-g", "never-was-b"])
    assert described["still-here-g"].state == "Empty" and described["still-here-g"].group_type == "classic"
    assert described["never-was-a"].state == described["never-was-b"].state == "Dead"
