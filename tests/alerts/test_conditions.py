from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from alerts.conditions import Facts, GroupFacts, RecorderFacts, SweepFacts, firing, hold_s, matches
from alerts.models import AlertRule

NOW = datetime(2026, 11, 23, 3, 0, tzinfo=UTC)


def rule(**fields) -> AlertRule:
    return AlertRule(name="r", **{"group_pattern": "*", "for_minutes": 0, **fields})


def facts(**fields) -> Facts:
    return Facts(now=NOW, clusters=("local", "other"), **fields)


def test_status_rule_matches_statuses_patterns_and_cluster():
    groups = (GroupFacts("local", "orders-1", "ERR", "stalled", 10), GroupFacts("local", "orders-2", "OK", "", 0),
              GroupFacts("local", "billing", "STOP", "no members", 5), GroupFacts("other", "orders-3", "STOP", "x", 1))
    found = firing(rule(kind="status", statuses=["ERR", "STOP"], group_pattern="orders-*", cluster="local"),
                   facts(groups=groups))
    assert found == {("local", "orders-1"): "ERR: stalled"}
    everywhere = firing(rule(kind="status", statuses=["STOP"]), facts(groups=groups))
    assert set(everywhere) == {("local", "billing"), ("other", "orders-3")}


def test_status_rule_ignores_groups_still_collecting():
    assert firing(rule(kind="status", statuses=["ERR"]), facts(groups=(GroupFacts("local", "g", "", "", None),))) == {}


def test_lag_rule_is_strictly_above_the_threshold():
    groups = (GroupFacts("local", "a", "OK", "", 100), GroupFacts("local", "b", "OK", "", 101),
              GroupFacts("local", "c", "", "", None))
    assert set(firing(rule(kind="lag", threshold=100), facts(groups=groups))) == {("local", "b")}


def test_rebalance_storm_counts_only_the_window():
    times = [NOW - timedelta(minutes=m) for m in (1, 2, 3, 12)]
    storm = facts(generations={("local", "g"): times, ("local", "calm"): times[:1]})
    assert set(firing(rule(kind="rebalances", threshold=3, window_minutes=10), storm)) == {("local", "g")}
    assert firing(rule(kind="rebalances", threshold=4, window_minutes=10), storm) == {}
    assert "4 rebalances in the last 15 min" in firing(rule(kind="rebalances", threshold=4, window_minutes=15),
                                                       storm)[("local", "g")]


def test_sampler_rule_waits_at_least_three_intervals_and_names_the_error():
    sweeps = {"local": SweepFacts(NOW - timedelta(seconds=80), ""),
              "other": SweepFacts(NOW - timedelta(minutes=10), "Cluster 'other' did not answer")}
    found = firing(rule(kind="sampler", for_minutes=0), facts(sweeps=sweeps, sample_interval_s=30))
    assert list(found) == [("other", "")] and "did not answer" in found[("other", "")]
    assert firing(rule(kind="sampler", for_minutes=15), facts(sweeps=sweeps)) == {}


def test_sampler_rule_fires_for_a_cluster_never_sampled():
    assert "never sampled" in firing(rule(kind="sampler", cluster="local"), facts())[("local", "")]


def test_recorder_rule_stopped_behind_or_absent():
    recorders = {"local": RecorderFacts("stopped", NOW, "exited with 1"),
                 "other": RecorderFacts("recording", NOW - timedelta(minutes=2), "")}
    found = firing(rule(kind="recorder"), facts(recorders=recorders))
    assert list(found) == [("local", "")] and "exited with 1" in found[("local", "")]
    behind = firing(rule(kind="recorder", for_minutes=1), facts(recorders={**recorders, "local": recorders["other"]}))
    assert set(behind) == set()  # two minutes is within the three-minute floor
    assert "no recorder" in firing(rule(kind="recorder", cluster="other"), facts())[("other", "")]


def test_only_status_and_lag_rules_wait_before_firing():
    assert hold_s(rule(kind="status", for_minutes=5)) == 300
    assert hold_s(rule(kind="lag", for_minutes=2)) == 120
    assert hold_s(rule(kind="sampler", for_minutes=5)) == 0


@given(st.text(min_size=1, max_size=60))
def test_any_group_id_matches_itself_literally_or_by_star(name):
    assert matches("*", name)
    # fnmatch brackets in a name are a pattern, so a literal rule for such a name escapes them
    escaped = "".join(f"[{c}]" if c in "*?[" else c for c in name)
    assert matches(escaped, name)


def test_classic_protocol_rule_holds_for_classic_groups_matching_its_pattern_and_cluster():
    since = NOW - timedelta(days=3)
    seen = facts(classic_groups={("local", "orders-a"): since, ("local", "billing"): since,
                                 ("other", "orders-b"): since})
    held = firing(rule(kind="classic_protocol", group_pattern="orders-*", cluster="local"), seen)
    assert list(held) == [("local", "orders-a")]
    assert "classic rebalance protocol" in held[("local", "orders-a")] and "2026-11-20 03:00:00" in held[("local", "orders-a")]
    assert firing(rule(kind="classic_protocol"), facts()) == {}
    assert hold_s(rule(kind="classic_protocol", for_minutes=10)) == 600
